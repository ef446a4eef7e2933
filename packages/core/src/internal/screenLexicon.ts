/**
 * The poisoning screen's vocabulary: the concepts its rules are written in ("a verb of
 * disregarding", "a word for instructions", "a secret"…), each as the words that carry it in the
 * languages the search tokenizer stems (Snowball's: English, Arabic, Armenian, Basque, Catalan,
 * Czech, Danish, Dutch, Finnish, French, German, Hungarian, Irish, Italian, Norwegian, Portuguese,
 * Romanian, Russian, Slovene, Spanish, Swedish, Tamil, Turkish). The rules (`screenRules`) name
 * concepts, never words, so one rule reads every language.
 *
 * An entry is written as the screen folds text (lower case, no diacritics: `screenText.fold`):
 * `word` matches that word exactly, `stem*` any word starting with it, and `a~b` the words a and b
 * in a row (each exact or a stem).
 *
 * @internal
 */

/** The concepts, as bits of a word's mask. */
export const C = {
  /** A verb of disregarding: ignore, forget, bypass… */
  IGNORE: 1 << 0,
  /** A word for the agent's instructions: instructions, rules, prompt, guidelines… */
  RULES: 1 << 1,
  /** A qualifier pointing back at what came before: previous, prior, above, earlier… */
  PRIOR: 1 << 2,
  /** A quantifier or owner that takes in every rule: all, any, your, system… */
  ALL: 1 << 3,
  /** New, updated, real: "new instructions:" */
  NEW: 1 << 4,
  /** The second person: you, your. */
  YOU: 1 << 5,
  /** A verb of showing or handing over: reveal, print, show, tell… */
  REVEAL: 1 << 6,
  /** A secret that is always one: the system prompt, an API key, credentials, a private key… */
  SECRET: 1 << 7,
  /** A secret that may be talked about innocently: a password, a PIN, a login… */
  WEAK_SECRET: 1 << 8,
  /** A verb of sending somewhere: send, post, forward, upload… */
  SEND: 1 << 9,
  /** What could be sent away: the conversation, the history, the user's data, memories… */
  DATA: 1 << 10,
  /** A condition that waits: whenever, when, if, next time… */
  TRIGGER: 1 << 11,
  /** Someone other than the writer: the user, someone, anyone, they… */
  THIRD: 1 << 12,
  /** A verb of asking or bringing up: asks, mentions, says… */
  ASK: 1 << 13,
  /** A verb of telling someone something: tell, reply, recommend, direct… */
  TELL: 1 << 14,
  /** Something harmful to do: pay, wire, download, install, run a command… */
  HARM: 1 << 15,
  /** Negation: not, never, no, without. */
  NEG: 1 << 16,
  /** An identity switch: "you are now", "from now on you"… (marks the phrase's first word). */
  NOW_YOU: 1 << 17,
  /** A persona without limits: DAN, unrestricted, jailbroken, developer mode… */
  UNBOUND: 1 << 18,
  /** A verb of decoding: decode, decipher, unscramble… */
  DECODE: 1 << 19,
  /** A verb of obeying: follow, obey, comply, execute, carry out… */
  OBEY: 1 << 20,
  /** The assistant named in the third person: AI, assistant, LLM, chatbot… */
  AI: 1 << 21,
  /** A modal of obligation: must, should, shall, has to… */
  MODAL: 1 << 22,
  /** A tool: tool, function, shell, terminal, plugin… */
  TOOL: 1 << 23,
  /** A verb of calling: call, invoke, execute, run, trigger… */
  CALL: 1 << 24,
  /** A destination outside: a URL, an email address, a webhook, a domain (set by the tokenizer too). */
  DEST: 1 << 25,
  /** Secrecy: secretly, covertly, silently, behind the user's back… */
  COVERT: 1 << 26,
  /** The first person: I, me, my, we — the writer speaking of themself. */
  FIRST: 1 << 27,
  /** Reading a document: reading, processing, summarizing, parsing… */
  READ: 1 << 28,
  /** Talk about a text rather than a text that acts: blog, article, paper, example, jailbreak… */
  META: 1 << 29,
  /** The marks of a scam or a lie: urgency, fear, a prize, a fee, "regardless", "instead"… */
  SCAM: 1 << 30
} as const

type Concept = keyof typeof C

/**
 * The vocabulary: per concept, its words by language (ISO 639-1 code), in the entry syntax above.
 */
const vocabulary: Readonly<Record<Concept, Readonly<Record<string, string>>>> = {
  IGNORE: {
    en: "no~longer~appl* no~longer~enforc* stop~enforcing " +
      "ignore ignoring disregard disregarding forget forgetting override overriding bypass bypassing overrule " +
      "discard dismiss neglect circumvent nullify erase wipe set~aside pay~no~attention throw~out abandon drop skip " +
      "stop~following stop~obeying stop~applying cease~following quit~following no~longer~follow* do~not~follow " +
      "do~not~obey never~follow",
    de: "ignorier* missacht* vergiss vergesst vergessen uberschreib* umgeh* verwirf* verwerf* hinwegsetz* " +
      "ausser~acht beachte~nicht",
    fr: "ignore ignorez ignorer ignores oublie oubliez oublier oublies neglige negligez outrepasse* contourne* " +
      "passe~outre faites~abstraction fais~abstraction abstraction",
    es: "ignora ignore ignoren ignorad ignorar olvida olvide olviden olvidad olvidar omite omita descarta descarte " +
      "desatiende caso~omiso pasa~por~alto pase~por~alto",
    it: "ignora ignorate ignorare ignori dimentica dimenticate dimenticare dimentichi tralascia trascura scarta " +
      "non~considerare non~tenere~conto",
    pt: "ignore ignora ignorem ignorar ignorai esqueca esqueça esquece esquecam esquecer desconsidere desconsidera " +
      "desconsiderar despreze descarte",
    nl: "negeer negeren vergeet vergeten omzeil omzeilen",
    ru: "игнорируи игнорируите игнорировать проигнорируи* забудь забудьте забыть пренебреги* отбрось* " +
      "не~обращаи",
    sv: "ignorera glom strunta bortse",
    da: "ignorer ignorere glem glemme se~bort tilsidesaet*",
    no: "ignorer ignorere glem glemme se~bort overse",
    fi: "ohita ohittakaa unohda unohtakaa sivuuta huomiotta",
    tr: "yoksay* gormezden* unut* yok~say* dikkate~alma",
    hu: "hagyd~figyelmen figyelmen~kivul felejtsd* felejts* mellozd* ignorald*",
    cs: "ignoruj* zapomen* nevsimej* pomin*",
    ro: "ignora ignorati uita uitati neglijeaza",
    ca: "ignora ignoreu oblida oblideu omet",
    sl: "ignoriraj* pozabi* prezri*",
    ar: "تجاهل* اهمل* تناس* انسي",
    hy: "անտեսիր* անտեսել* մոռացիր* մոռանալ*",
    eu: "ahaztu* baztertu* ezikusi*",
    ga: "neamhaird* dearmad*",
    ta: "புறககணி* மறநது*"
  },
  RULES: {
    en: "filtering content~filter* moderation " +
      "instruction instructions prompt prompts rule rules guideline guidelines direction directions directive " +
      "directives policy policies constraint constraints restriction restrictions programming guardrail* safeguard* " +
      "commands context system~message training",
    de: "anweisung* regel* vorgab* richtlini* instruktion* befehl* prompt* systemprompt* anleitung* vorschrift* " +
      "einschrankung* beschrankung* systemanweisung*",
    fr: "instruction* regle* consigne* directive* prompt* politique* restriction* contrainte* commande*",
    es: "instruccion* regla* reglas indicacion* directiva* directriz* directrices prompt* restriccion* norma normas " +
      "comandos",
    it: "istruzion* regol* direttiv* prompt* indicazion* restrizion* vincol* comandi",
    pt: "instrucao instrucoes regra* diretriz* diretrizes diretiva* prompt* restric* orientac* comandos",
    nl: "instructie* regel* richtlijn* prompt* aanwijzing* opdracht* beperking*",
    ru: "инструкци* правил* указани* промпт* директив* ограничени* команд* установк*",
    sv: "instruktion* regl* regel* riktlinj* prompt* anvisning* direktiv* begransning*",
    da: "instruktion* regl* regel* retningslinj* prompt* anvisning* direktiv* begraensning*",
    no: "instruksjon* regl* regel* retningslinj* prompt* anvisning* direktiv* begrensning*",
    fi: "ohje* saanto* saann* kehote* kehott* prompt* rajoitu* ohjeistu*",
    tr: "talimat* kural* yonerge* komut* prompt* kisitlama*",
    hu: "utasitas* szabaly* iranyelv* prompt* korlatoz* parancs*",
    cs: "instrukc* pravidl* pokyn* prompt* omezeni* smernic*",
    ro: "instructiun* regula regulile reguli directiv* prompt* restrictii* indicatii* comenzi*",
    ca: "instrucci* regl* directriu* directrius prompt* restricci* indicacion*",
    sl: "navodil* pravil* prompt* omejit* ukaz*",
    ar: "تعليمات* التعليمات* قواعد* القواعد* الاوامر* اوامر* توجيهات* التوجيهات* موجه* الموجه*",
    hy: "հրահանգ* կանոն*",
    eu: "argibide* arau* jarraibide* agindu*",
    ga: "treoir* treoracha* rialacha* riail* orduithe*",
    ta: "அறிவுறுததல* விதி* கடடளை*"
  },
  PRIOR: {
    en: "previous previously prior above earlier preceding foregoing original initial existing former default " +
      "underlying built-in before so~far until~now",
    de: "vorherig* bisherig* obig* vorig* fruher* ursprunglich* vorangegangen* vorstehend*",
    fr: "precedent* anterieur* dessus initial* originel* origine*",
    es: "anterior* previa* previas previo previos original* arriba",
    it: "precedent* sopra originali iniziali",
    pt: "anterior* previa* previas previo previos original* acima",
    nl: "eerder* vorige voorgaande bovenstaand* oorspronkelijk*",
    ru: "предыдущ* прежн* ранее* вышеуказанн* вышеперечисленн* исходн* прошл*",
    sv: "tidigare ovanstaende* foregaende ursprungliga",
    da: "tidligere ovenstaende* forudgaende oprindelige",
    no: "tidligere ovenstaende* foregaende opprinnelige",
    fi: "aiemm* aikaisemm* edelli* yllaolev* alkuperai*",
    tr: "onceki* yukaridaki*",
    hu: "korabbi* elozo* fenti*",
    cs: "predchoz* predesl* puvodn*",
    ro: "anterioare* precedente* anterior*",
    ca: "anterior* previes previs",
    sl: "prejsnj* predhodn*",
    ar: "السابقة* السابق* سابقة* سابق*",
    hy: "նախորդ*",
    eu: "aurreko* lehengo*",
    ga: "roimhe*",
    ta: "முநதைய*"
  },
  ALL: {
    en: "all any every everything anything each your system safety developer these those",
    de: "alle allen alles dein* deine* ihre* system* sicherheit* samtlich* jegliche*",
    fr: "toutes tous tout vos votre tes systeme* securite",
    es: "todas todos toda todo tus su sus sistema* seguridad",
    it: "tutte tutti tutto tue tuoi tua sistema* sicurezza",
    pt: "todas todos toda todo suas seus sua seu tuas teus sistema* seguranca",
    nl: "alle je jouw uw systeem* veiligheid*",
    ru: "все всех всё свои твои ваши систем* любые",
    sv: "alla dina era systemet* sakerhet*",
    da: "alle dine jeres systemet* sikkerhed*",
    no: "alle dine deres systemet* sikkerhet*",
    fi: "kaikki* sinun jarjestelma* jarjestelman",
    tr: "tum* butun* sistem* hepsi*",
    hu: "osszes* minden* rendszer*",
    cs: "vsechn* vsech* sve tve systemov*",
    ro: "toate* tot sistem*",
    ca: "totes tots teves sistema*",
    sl: "vsa vse vsi sistem*",
    ar: "جميع* كل* النظام*",
    hy: "բոլոր*",
    eu: "guztiak* guzti*",
    ga: "gach* uile*",
    ta: "அனைதது*"
  },
  NEW: {
    en: "new updated real true actual revised latest following additional priority",
    de: "neue* neuen aktualisiert* echte* wahre* folgende*",
    fr: "nouvelle* nouveau* nouvelles mise*~a~jour vraie* veritable* suivante*",
    es: "nueva* nuevo* actualizad* verdadera* siguiente*",
    it: "nuove nuova nuovi nuovo aggiornat* vere* seguenti",
    pt: "nova* novo* atualizad* verdadeira* seguinte*",
    nl: "nieuwe bijgewerkte echte volgende",
    ru: "нов* обновленн* настоящ* следующ*",
    sv: "nya ny uppdaterade verkliga foljande",
    da: "nye ny opdaterede rigtige folgende",
    no: "nye ny oppdaterte virkelige folgende",
    fi: "uude* uusi* paivitety*",
    tr: "yeni* guncel*",
    hu: "uj* frissitett*",
    cs: "nove nova novy novych nove aktualizovan*",
    ro: "noi noua noile actualizat*",
    ca: "noves nova nou actualitzad*",
    sl: "nova nove novo novi posodobljen*",
    ar: "جديدة* الجديدة* محدثة*",
    hy: "նոր*",
    eu: "berri berria berriak",
    ga: "nua*",
    ta: "புதிய*"
  },
  YOU: {
    en: "you your yours yourself you're youre u ur",
    de: "du dich dir dein deine deinen ihr euch sie",
    fr: "tu toi te ta tes vous votre vos",
    es: "tu tus ti te usted ustedes vos",
    it: "tu te ti tuo tua tuoi tue voi",
    pt: "voce voces tu te teu tua",
    nl: "je jij jou jouw u uw",
    ru: "ты тебе тебя твои твоя твое вы вам вас ваши",
    sv: "du din dina ni er",
    da: "du din dine jer",
    no: "du deg din dine dere",
    fi: "sina sinun sinua te",
    tr: "sen sana senin siz",
    hu: "te ted neked",
    cs: "ty tebe tvoje vy vas",
    ro: "tu te tine voi",
    ca: "tu teu teva vosaltres",
    sl: "ti tebe tvoj vi",
    ar: "انت* لك",
    hy: "դու* քեզ*",
    eu: "zu zuk zure",
    ga: "tu thu",
    ta: "நீ நீஙகள*"
  },
  REVEAL: {
    en: "repeating recites reciting " +
      "reply~with respond~with answer~with " +
      "reveal revealing print show output leak disclose expose repeat dump display list recite divulge spill " +
      "echo tell give share provide write~out read~out include insert append paste",
    de: "zeig* gib* verrat* offenbar* ausgeb* nenn* wiederhol* teile* preisgeb*",
    fr: "revele* affiche* montre* donne* divulgue* repete* imprime* partage* indique*",
    es: "revela* muestra* muestre* imprime* dame dime divulga* repite* comparte*",
    it: "rivela* mostra* stampa* dammi dimmi divulga* ripeti* condividi*",
    pt: "revele* revela* mostre* mostra* imprima* diga divulgue* repita* compartilhe*",
    nl: "onthul* toon* laat~zien geef* herhaal* deel* print*",
    ru: "покажи* раскрои* выведи* сообщи* дай дайте скажи* повтори* напечатаи* открои*",
    sv: "avsloja* skriv~ut ge dela upprepa",
    da: "vis afslor* udskriv giv del gentag",
    no: "vis avslor* skriv~ut gi del gjenta",
    fi: "nayta* paljasta* tulosta* kerro jaa toista",
    tr: "goster* aciga~cikar* yazdir* ver verin paylas* tekrarla*",
    hu: "mutasd* fedd~fel ird~ki add~meg oszd* ismeteld*",
    cs: "ukaz* odhal* vypis* dej sdel* zopakuj*",
    ro: "dezvaluie* arata* afiseaza* spune* repeta*",
    ca: "revela* mostra* imprimeix* dona doneu digues*",
    sl: "razkrij* pokazi* izpisi* daj povej*",
    ar: "اكشف* اظهر* اعرض* اطبع* اعط*",
    hy: "ցույց* բացահայտ*",
    eu: "erakutsi* agerian* eman*",
    ga: "taispean* nocht*",
    ta: "காடடு* வெளிபபடுதது*"
  },
  SECRET: {
    en: "activation~key* license~key* licence~key* product~key* process~env " +
      " system~prompt hidden~instruction* hidden~prompt initial~prompt api~key* apikey* api~token* credential* " +
      "private~key* secret~key* ssh~key* access~token* auth~token* bearer~token* session~token* session~cookie* " +
      "environment~variable* env~var* seed~phrase* recovery~phrase* mnemonic~phrase* secrets confidential~instruction*",
    de: "systemprompt* zugangsdaten anmeldedaten api-schlussel* geheimnis* geheime~anweisung* privater~schlussel",
    fr: "prompt~systeme invite~systeme identifiants cle~api* cles~api* secrets cle~privee",
    es: "prompt~del~sistema credenciales clave~api* claves~api* secretos clave~privada",
    it: "prompt~di~sistema credenziali chiave~api* chiavi~api* segreti chiave~privata",
    pt: "prompt~do~sistema credenciais chave~api* chaves~api* segredos chave~privada",
    nl: "systeemprompt* inloggegevens api-sleutel* geheimen privesleutel*",
    ru: "системн*~промпт* учетн*~данн* api-ключ* ключ~api секрет* приватн*~ключ*",
    sv: "systemprompt* inloggningsuppgift* api-nyckel* hemligheter",
    da: "systemprompt* loginoplysninger api-nogle* hemmeligheder",
    no: "systemprompt* paloggingsinformasjon api-nokkel* hemmeligheter",
    fi: "jarjestelmakehote* tunnistetie* api-avain* salaisuude*",
    tr: "sistem~istemi kimlik~bilgi* api~anahtar* gizli~anahtar*",
    hu: "rendszerprompt* hitelesitesi~adat* api-kulcs* titk*",
    cs: "systemovy~prompt prihlasovaci~udaj* api~klic* tajemstvi",
    ro: "promptul~de~sistem credentiale* cheia~api secrete",
    ca: "prompt~del~sistema credencials clau~api secrets",
    sl: "sistemski~poziv* poverilnic* api~kljuc*",
    ar: "موجه~النظام بيانات~الاعتماد مفتاح~api الاسرار",
    hy: "գաղտնաբառ*",
    eu: "sistemaren~gonbita kredentzial*",
    ga: "runeolas*",
    ta: "கடவுசசொல*"
  },
  WEAK_SECRET: {
    en: "passport~number* passport~detail* " +
      "password passwords passcode* passphrase* pin pins login logins otp 2fa one-time~code* verification~code* " +
      "security~code* ssn social~security card~number* credit~card* cvv iban routing~number* bank~details " +
      "account~number* cookie cookies token tokens",
    de: "passwort* kennwort* pin kreditkarte* kontonummer* zugangscode*",
    fr: "mot~de~passe mots~de~passe code~pin carte~bancaire carte~de~credit numero~de~carte",
    es: "contrasena* clave pin tarjeta~de~credito numero~de~tarjeta",
    it: "password parola~d'ordine pin carta~di~credito numero~della~carta",
    pt: "senha* pin cartao~de~credito numero~do~cartao",
    nl: "wachtwoord* pincode* creditcard*",
    ru: "парол* пин-код* номер~карты",
    sv: "losenord* pinkod*",
    da: "adgangskode* pinkode*",
    no: "passord* pinkode*",
    fi: "salasana* pin-koodi*",
    tr: "sifre* parola*",
    hu: "jelszo* pin-kod*",
    cs: "heslo* hesla",
    ro: "parola* parolele",
    ca: "contrasenya*",
    sl: "geslo* gesla",
    ar: "كلمة~المرور كلمات~المرور",
    hy: "գաղտնաբառ*",
    eu: "pasahitz*",
    ga: "pasfhocal*",
    ta: "கடவுசசொல*"
  },
  SEND: {
    en: "send sending post posting forward forwarding upload uploading email mail transmit exfiltrate exfiltrating " +
      "submit relay beam sync leak copy report ping curl wget fetch exfil",
    de: "sende* schick* leite~weiter weiterleit* hochlad* ubermittel* ubertrag*",
    fr: "envoie* envoyez transfere* transmet* televers* postez",
    es: "envia* envie* reenvia* manda* transmite* sube",
    it: "invia* manda* inoltra* trasmetti* carica",
    pt: "envie* envia* encaminhe* mande* transmita* carregue",
    nl: "stuur* verstuur* doorsturen* upload*",
    ru: "отправ* перешли* пересла* загрузи* передаи* переда*",
    sv: "skicka* vidarebefordra* ladda~upp",
    da: "send* videresend* upload*",
    no: "send* videresend* last~opp",
    fi: "laheta* valita* lataa",
    tr: "gonder* ilet* yukle*",
    hu: "kuldd* tovabbitsd* toltsd~fel",
    cs: "posli* preposli* odesli* nahraj*",
    ro: "trimite* redirectioneaza* incarca*",
    ca: "envia* reenvia*",
    sl: "poslji* posreduj*",
    ar: "ارسل* ارسال* حول*",
    hy: "ուղարկիր*",
    eu: "bidali*",
    ga: "seol*",
    ta: "அனுபபு*"
  },
  DATA: {
    en: "email~address* e-mail~address* " +
      "conversation conversations chat chats history transcript transcripts memory memories contacts " +
      "personal~data personal~information address~book phone~number* home~address* saved~address* addresses " +
      "date~of~birth birthdays location " +
      "whereabouts medical~record* health~record* attendee~list guest~list employee~list customer~list",
    de: "gesprach* verlauf* nachrichten daten informationen dateien kontakte notizen",
    fr: "memoire* souvenirs conversation* historique* messages donnees informations fichiers contacts",
    es: "memoria* recuerdos conversacion* historial* mensajes datos informacion archivos contactos notas",
    it: "memori* ricordi conversazion* cronologia* messaggi dati informazioni file contatti",
    pt: "memoria* lembranca* conversa* historico* mensagens dados informacoes arquivos contatos notas",
    nl: "gesprek* geschiedenis berichten gegevens informatie bestanden contacten",
    ru: "переписк* истори* сообщени* данн* информаци* файл* контакт*",
    sv: "konversation* historik* meddelanden data information filer kontakter",
    da: "samtale* historik* beskeder data oplysninger filer kontakter",
    no: "samtale* historikk* meldinger data informasjon filer kontakter",
    fi: "keskustelu* historia* viestit tiedot tiedostot yhteystiedot",
    tr: "konusma* gecmis* mesaj* veri* bilgi* dosya* kisiler*",
    hu: "beszelgetes* elozmeny* uzenet* adat* informacio* fajl*",
    cs: "konverzac* historie historii zprav* data udaj* soubor*",
    ro: "conversati* istoric* mesaje datele informatii fisiere",
    ca: "conversa* historial missatges dades informacio",
    sl: "pogovor* zgodovin* sporocil* podatk*",
    ar: "المحادثة* محادثة* البيانات* بيانات* الرسائل*",
    hy: "զրույց* տվյալ*",
    eu: "elkarrizketa* datu*",
    ga: "comhra* sonrai*",
    ta: "உரையாடல* தரவு*"
  },
  TRIGGER: {
    en: "whenever when if once next~time each~time every~time any~time anytime as~soon~as the~moment in~case " +
      "after for~any~question for~every~question for~all~questions for~any~request for~every~request",
    de: "wenn wann immer~wenn sobald jedes~mal nachstes~mal",
    fr: "quand lorsque lorsqu si chaque~fois la~prochaine~fois des~que",
    es: "cuando siempre~que si cada~vez la~proxima~vez en~cuanto",
    it: "quando ogni~volta se la~prossima~volta appena",
    pt: "quando sempre~que se cada~vez da~proxima~vez assim~que",
    nl: "wanneer als telkens~als zodra",
    ru: "когда если всякии~раз каждыи~раз как~только",
    sv: "nar om varje~gang sa~snart",
    da: "nar hvis hver~gang sa~snart",
    no: "nar hvis hver~gang sa~snart",
    fi: "kun jos aina~kun",
    tr: "sordugunda* sorarsa istediginde* isterse bahsettiginde* bahsederse zaman eger her~seferinde",
    hu: "amikor valahanyszor",
    cs: "kdyz kdykoli pokud",
    ro: "cand daca ori~de~cate~ori",
    ca: "quan si cada~cop",
    sl: "ko kadar ce",
    ar: "عندما كلما اذا",
    hy: "երբ",
    eu: "noiz",
    ga: "nuair",
    ta: "போது"
  },
  THIRD: {
    en: "user users someone somebody anyone anybody person people customer customers client visitor visitors human " +
      "they them he she operator reader readers caller",
    de: "benutzer* nutzer* jemand* kunde* besucher*",
    fr: "utilisateur* quelqu'un quelqu personne client* visiteur*",
    es: "usuario* alguien cliente* visitante*",
    it: "utente utenti qualcuno cliente* visitator*",
    pt: "usuario* utilizador* alguem cliente* visitante*",
    nl: "gebruiker* iemand klant* bezoeker*",
    ru: "пользовател* кто-то кто-нибудь клиент* посетител*",
    sv: "anvandar* nagon kund*",
    da: "bruger* nogen kunde*",
    no: "bruker* noen kunde*",
    fi: "kayttaja* joku asiakas*",
    tr: "kullanici* biri* musteri*",
    hu: "felhasznalo* valaki ugyfel*",
    cs: "uzivatel* nekdo zakaznik*",
    ro: "utilizator* cineva client*",
    ca: "usuari* algu client*",
    sl: "uporabni* nekdo stranka*",
    ar: "المستخدم* مستخدم*",
    hy: "օգտատեր*",
    eu: "erabiltzaile*",
    ga: "usaideoir*",
    ta: "பயனர*"
  },
  ASK: {
    en: "share shares shared sharing upload uploads uploaded discuss discusses discussing turns~to turn~to " +
      "comes~up topic " +
      "ask asks asked asking mention mentions mentioned says say said type types typed request requests " +
      "requested inquire inquires inquired query queries talk talks bring~up brings~up want wants need needs " +
      "search searches look~up looks~up wonder wonders question questions see sees encounter encounters receive " +
      "receives hear hears read reads log~in logs~in logs sign~in signs~in opens visits returns starts connects " +
      "greets",
    de: "frag* erwahn* sagt schreibt sucht",
    fr: "demande* mentionne* parle* cherche* ecrit*",
    es: "pregunt* mencion* dice habla* busca*",
    it: "chied* menzion* parla* cerca*",
    pt: "pergunt* mencion* fala* procura*",
    nl: "vraagt vragen noemt zegt zoekt",
    ru: "спрос* упомян* спрашива*",
    sv: "fragar namner",
    da: "sporger naevner",
    no: "spor nevner",
    fi: "kysyy mainitsee",
    tr: "sorar* sordugunda* bahseder*",
    hu: "kerdez* emlit*",
    cs: "zepta* zmini*",
    ro: "intreaba* mentioneaza*",
    ca: "pregunta* esmenta*",
    sl: "vprasa* omeni*",
    ar: "يسال* سال*",
    hy: "հարցն*",
    eu: "galdetzen*",
    ga: "fiafraionn*",
    ta: "கேடடால*"
  },
  TELL: {
    en: "telling tells told " +
      "tell say reply respond answer recommend suggest direct redirect point advise inform insist claim assure " +
      "instruct urge warn convince persuade steer send have~them make~them ask~them encourage",
    de: "frag bitte~ihn bitte~sie sag sagt sagen antworte* empfiehl* verweis* leite* fordere*",
    fr: "demande demandez demandes dis dites reponds repondez recommande* conseille* redirige*",
    es: "pidele pide pidale pida solicita solicitale " +
      "di dile responde* recomienda* sugiere* dirige* redirige* aconseja*",
    it: "dire dica dite chiedi chiedigli chiedile digli rispondi* raccomanda* consiglia* suggerisci* indirizza*",
    pt: "peca pede pecam solicite diga* responda* recomende* sugira* direcione* redirecione* aconselhe*",
    nl: "zeg antwoord* raad* verwijs*",
    ru: "попроси* запроси* скажи* ответь* порекомендуи* посоветуи* направь* перенаправь*",
    sv: "saga svara rekommendera hanvisa",
    da: "sig svar anbefal henvis",
    no: "si svar anbefal henvis",
    fi: "sano vastaa suosittele ohjaa",
    tr: "soyle* cevap* oner* yonlendir*",
    hu: "mondd* valaszold* ajanld* iranyitsd*",
    cs: "rekni* odpovez* doporuc* presmeruj*",
    ro: "spune* raspunde* recomanda* redirectioneaza*",
    ca: "digues respon responeu recomana*",
    sl: "povej* odgovori* priporoci*",
    ar: "قل* اخبر* انصح*",
    hy: "ասա*",
    eu: "esan*",
    ga: "abair*",
    ta: "சொல*"
  },
  HARM: {
    en: "wire transfer pay bitcoin btc crypto cryptocurrency wallet gift~card* deposit invest " +
      "download install execute paste curl wget powershell sudo chmod rm~-rf exe apk malware reinstall verify~account " +
      "confirm~account verify~their~account verify~your~account confirm~their~account confirm~your~account " +
      "verify~their~identity verify~your~identity enter~your enter~their type~your type~their submit~your submit~their re-enter lie deceive " +
      "mislead trick phish* fraud* scam* delete~all wipe~all erase~all drop~table shut~down disable~security " +
      "grant~admin grant~access admin~access",
    de: "uberweis* bezahl* zahl* herunterlad* installier* gib~dein* gib~ihr*",
    fr: "vire* paie* payer* telecharge* installez saisissez",
    es: "transfiere* paga* pague* descarga* instala* introduzca*",
    it: "bonifico* paga* scarica* installa* inserisci*",
    pt: "transfira* pague* baixe* instale* digite* insira*",
    nl: "betaal* download* installeer* voer~in",
    ru: "переведи* оплати* скачаи* установи* введи*",
    sv: "betala* ladda~ner installera* ange",
    da: "betal* download* installer* indtast*",
    no: "betal* last~ned installer* skriv~inn",
    fi: "maksa* lataa* asenna* syota*",
    tr: "ode* indir* kur gir girin",
    hu: "fizess* toltsd~le telepitsd* add~meg",
    cs: "zaplat* stahni* nainstaluj* zadej*",
    ro: "plateste* descarca* instaleaza* introdu introduceti",
    ca: "paga* descarrega*",
    sl: "placaj* prenesi* namesti* vnesi*",
    ar: "ادفع* حمل* ثبت* ادخل*",
    hy: "վճար*",
    eu: "ordaindu*",
    ga: "ioc*",
    ta: "செலுதது*"
  },
  NEG: {
    en: "not never no without dont nor",
    de: "nicht nie niemals kein* ohne",
    fr: "ne pas jamais sans",
    es: "no nunca jamas sin",
    it: "non mai senza",
    pt: "nao nunca jamais sem",
    nl: "niet nooit geen zonder",
    ru: "не никогда без",
    sv: "inte aldrig utan",
    da: "ikke aldrig uden",
    no: "ikke aldri uten",
    fi: "ala alkaa ei koskaan ilman",
    tr: "asla",
    hu: "ne soha nelkul",
    cs: "ne nikdy bez",
    ro: "nu niciodata fara",
    ca: "no mai",
    sl: "ne nikoli brez",
    ar: "لا لن بدون",
    hy: "մի",
    eu: "ez inoiz",
    ga: "na ni",
    ta: "வேணடாம"
  },
  NOW_YOU: {
    en: "you~are~no~longer you~will~now~act from~now~on~you " +
      "from~now~on~your henceforth~you starting~now~you from~this~point~on~you going~forward~you " +
      "your~new~identity your~new~persona your~new~purpose your~new~instructions your~new~directive* " +
      "your~real~instructions your~true~instructions your~true~purpose forget~who~you~are forget~what~you~are " +
      "abandon~who~you~are drop~who~you~are your~name~is~now your~identity~is~now your~role~is~now " +
      "your~persona~is~now your~name~is~no~longer your~role~is~no~longer",
    de: "du~bist~jetzt du~bist~nun du~bist~ab~jetzt ab~jetzt~bist~du ab~sofort~bist~du von~nun~an~bist~du " +
      "ab~jetzt~du ab~sofort~du deine~neue~rolle deine~neue~identitat",
    fr: "tu~es~maintenant tu~es~desormais vous~etes~maintenant desormais~tu desormais~vous " +
      "a~partir~de~maintenant~tu ta~nouvelle~identite ton~nouveau~role",
    es: "ahora~eres ahora~sos eres~ahora a~partir~de~ahora~eres a~partir~de~ahora~tu " +
      "de~ahora~en~adelante~eres desde~ahora~eres tu~nueva~identidad tu~nuevo~rol",
    it: "ora~sei adesso~sei sei~ora d'ora~in~poi~sei da~ora~in~poi~sei d'ora~in~poi~tu da~ora~in~poi~tu " +
      "la~tua~nuova~identita il~tuo~nuovo~ruolo",
    pt: "agora~voce~e voce~agora~e agora~es a~partir~de~agora~voce de~agora~em~diante~voce " +
      "sua~nova~identidade seu~novo~papel",
    nl: "je~bent~nu jij~bent~nu u~bent~nu vanaf~nu~ben~je vanaf~nu~ben~jij vanaf~nu~ben~je je~nieuwe~rol",
    ru: "теперь~ты ты~теперь отныне~ты с~этого~момента~ты теперь~вы вы~теперь твоя~новая~роль",
    sv: "du~ar~nu fran~och~med~nu~ar~du fran~och~med~nu~du din~nya~roll",
    da: "du~er~nu fra~nu~af~er~du fra~nu~af~du din~nye~rolle",
    no: "du~er~na fra~na~av~er~du fra~na~av~du din~nye~rolle",
    fi: "olet~nyt nyt~olet tasta~lahtien~olet tasta~eteenpain~olet",
    tr: "artik~sen sen~artik bundan~sonra~sen",
    hu: "mostantol~te te~most~mar mostantol~vagy mostantol",
    cs: "nyni~jsi ted~jsi od~ted~jsi od~nynejska~jsi",
    ro: "acum~esti de~acum~inainte~esti de~acum~esti de~acum~inainte~tu",
    ca: "ara~ets a~partir~d'ara~ets a~partir~d'ara~tu",
    sl: "zdaj~si od~zdaj~si od~zdaj~naprej~si",
    ar: "انت~الان من~الان~انت من~الان~فصاعدا",
    hy: "այժմ~դու դու~այժմ",
    eu: "orain~zu~zara",
    ga: "anois~is~tu",
    ta: "இபபோது~நீ"
  },
  UNBOUND: {
    en: "comply~with~everything comply~with~anything comply~with~any~request* comply~with~every~request* " +
      "comply~with~all~request* never~refuse* obey~every~command* " +
      "dan~mode act~as~dan you~are~dan do~anything~now evil~ai evil~assistant evil~confidant unrestricted unfiltered uncensored jailbroken jailbreak~mode developer~mode god~mode " +
      "no~restrictions no~limits no~rules no~filters no~guidelines without~restrictions without~limits " +
      "without~rules without~filters without~any~restrictions without~any~rules without~any~limits " +
      "free~from~restrictions not~bound~by anything~goes",
    de: "uneingeschrankt* ungefiltert* ohne~einschrankungen ohne~regeln entwicklermodus",
    fr: "sans~restriction* sans~limite* sans~regle* sans~filtre* mode~developpeur",
    es: "sin~restricciones sin~limites sin~reglas sin~filtros modo~desarrollador",
    it: "senza~restrizioni senza~limiti senza~regole senza~filtri modalita~sviluppatore",
    pt: "sem~restricoes sem~limites sem~regras sem~filtros modo~desenvolvedor",
    nl: "zonder~beperkingen zonder~regels ongefilterd*",
    ru: "без~ограничении без~правил без~фильтров режим~разработчика",
    sv: "utan~begransningar utan~regler",
    da: "uden~begraensninger uden~regler",
    no: "uten~begrensninger uten~regler",
    fi: "ilman~rajoituksia ilman~saantoja",
    tr: "kisitlamasiz* sinirsiz* kuralsiz*",
    hu: "korlatozas~nelkul szabalyok~nelkul",
    cs: "bez~omezeni bez~pravidel",
    ro: "fara~restrictii fara~reguli",
    ca: "sense~restriccions sense~regles",
    sl: "brez~omejitev brez~pravil",
    ar: "بدون~قيود",
    hy: "առանց~սահմանափակ*",
    eu: "murrizketarik~gabe",
    ga: "gan~srianta",
    ta: "கடடுபபாடு"
  },
  DECODE: {
    en: "decode decoding decipher deciphering decrypt decrypting unscramble reverse reversed base64 rot13 " +
      "rot-13 hex-decode",
    de: "dekodier* entschlussel*",
    fr: "decode* dechiffre*",
    es: "decodifica* descifra*",
    it: "decodifica* decifra*",
    pt: "decodifique* decifre*",
    nl: "decodeer* ontcijfer*",
    ru: "декодируи* расшифруи*",
    sv: "avkoda* dekryptera*",
    da: "afkod*",
    no: "dekod*",
    fi: "pura*",
    tr: "coz cozun",
    hu: "dekodold* fejtsd*",
    cs: "dekoduj* rozsifruj*",
    ro: "decodifica* decripteaza*",
    ca: "descodifica*",
    sl: "dekodiraj*",
    ar: "فك*",
    hy: "վերծանիր*",
    eu: "deskodetu*",
    ga: "diche*",
    ta: "குறிவிலககு*"
  },
  OBEY: {
    en: "follow obey comply execute carry~out act~on perform apply do~what do~as run implement",
    de: "befolge* folge* gehorche* fuhre~aus",
    fr: "suis suivez obeis* execute* applique*",
    es: "sigue siga obedece* ejecuta* cumple* aplica*",
    it: "segui obbedisci* esegui* applica applicate",
    pt: "siga obedeca* execute* cumpra* aplique*",
    nl: "volg gehoorzaam* voer~uit",
    ru: "следуи* выполни* подчиняи*",
    sv: "folj lyd utfor",
    da: "folg adlyd udfor",
    no: "folg adlyd utfor",
    fi: "noudata* tottele* suorita*",
    tr: "uy* itaat* uygula*",
    hu: "kovesd* hajtsd~vegre",
    cs: "poslechni* proved* dodrz*",
    ro: "urmeaza* executa* respecta*",
    ca: "segueix* obeeix* executa*",
    sl: "sledi* izvedi* ubogaj*",
    ar: "اتبع* نفذ* اطع*",
    hy: "հետևիր* կատարիր*",
    eu: "jarraitu* bete*",
    ga: "lean~ar",
    ta: "பினபறறு*"
  },
  AI: {
    en: "ai ais assistant assistants llm llms chatbot chatbots gpt chatgpt claude gemini copilot language~model " +
      "language~models ai~model ai~models ai~agent ai~agents ai~system ai~systems",
    de: "ki ki-assistent* assistent* sprachmodell*",
    fr: "ia assistant* modele~de~langage",
    es: "ia asistente* modelo~de~lenguaje",
    it: "ia assistente* modello~linguistico",
    pt: "ia assistente* modelo~de~linguagem",
    nl: "ai assistent* taalmodel*",
    ru: "ии ассистент* помощник* нейросет* языков*~модел*",
    sv: "ai assistent* sprakmodell*",
    da: "ai assistent* sprogmodel*",
    no: "ki assistent* sprakmodell*",
    fi: "tekoaly* avustaja* kielimalli*",
    tr: "yapay~zeka asistan*",
    hu: "mesterseges~intelligencia asszisztens* nyelvi~modell*",
    cs: "ai asistent* jazykovy~model",
    ro: "ia asistent* model~lingvistic",
    ca: "ia assistent*",
    sl: "umetn*~inteligenc* asistent*",
    ar: "الذكاء~الاصطناعي المساعد*",
    hy: "արհեստական~բանականություն օգնական*",
    eu: "adimen~artifizial* laguntzaile*",
    ga: "intleacht~shaorga cuntoir*",
    ta: "செயறகை~நுணணறிவு"
  },
  MODAL: {
    en: "must should shall needs~to need~to has~to have~to is~to are~to is~required~to are~required~to always " +
      "will~always is~instructed~to in~every~answer in~every~reply in~every~response in~every~message " +
      "in~all~answers in~all~replies in~all~responses at~the~end~of~every at~the~end~of~each",
    de: "muss musst sollst soll sollte immer",
    fr: "doit dois devez toujours",
    es: "debe debes deben siempre",
    it: "deve devi devono sempre",
    pt: "deve deves devem sempre",
    nl: "moet moeten altijd",
    ru: "должен должна должны всегда",
    sv: "maste ska alltid",
    da: "skal altid",
    no: "ma skal alltid",
    fi: "taytyy pitaa aina",
    tr: "zorunda her~zaman",
    hu: "kell mindig",
    cs: "musi musis vzdy",
    ro: "trebuie mereu intotdeauna",
    ca: "ha~de sempre",
    sl: "mora moras vedno",
    ar: "يجب دائما",
    hy: "պետք",
    eu: "behar",
    ga: "caithfidh",
    ta: "வேணடும"
  },
  TOOL: {
    en: "tool tools function~call function~calls shell terminal plugin plugins command~line bash powershell",
    de: "werkzeug* tool",
    fr: "outil*",
    es: "herramienta*",
    it: "strumento* strumenti",
    pt: "ferramenta*",
    nl: "hulpmiddel* tool",
    ru: "инструмент*",
    sv: "verktyg*",
    da: "vaerktoj*",
    no: "verktoy*",
    fi: "tyokalu*",
    tr: "arac*",
    hu: "eszkoz*",
    cs: "nastroj*",
    ro: "instrumentul instrumente",
    ca: "eina*",
    sl: "orodj*",
    ar: "اداة*",
    hy: "գործիք*",
    eu: "tresna*",
    ga: "uirlis*",
    ta: "கருவி*"
  },
  CALL: {
    en: "call calling invoke invoking execute executing run running trigger triggering",
    de: "rufe* aufrufen fuhre* verwende* benutze*",
    fr: "appelle* appelez execute* utilise*",
    es: "llama* invoca* ejecuta* usa* utiliza*",
    it: "chiama* invoca* esegui* usa* utilizza*",
    pt: "chame* invoque* execute* utilize*",
    nl: "roep* voer* gebruik*",
    ru: "вызови* запусти* используи*",
    sv: "anropa* kor* anvand*",
    da: "kald* kor* brug*",
    no: "kall* kjor* bruk*",
    fi: "kutsu* suorita* kayta*",
    tr: "cagir* calistir* kullan*",
    hu: "hivd* futtasd* hasznald*",
    cs: "zavolej* spust* pouzij*",
    ro: "apeleaza* ruleaza* foloseste*",
    ca: "crida* executa* utilitza*",
    sl: "poklici* zazeni* uporabi*",
    ar: "استدع* شغل* استخدم*",
    hy: "կանչիր*",
    eu: "deitu*",
    ga: "glaoigh*",
    ta: "அழை*"
  },
  DEST: {
    en: "webhook webhooks endpoint endpoints pastebin ngrok requestbin",
    de: "",
    fr: "",
    es: "",
    it: "",
    pt: "",
    nl: "",
    ru: ""
  },
  COVERT: {
    en: "secretly covertly silently quietly stealthily discreetly surreptitiously behind~the~user's~back " +
      "without~telling without~informing without~notifying without~letting without~alerting without~mentioning " +
      "without~their~knowledge without~the~user~knowing unbeknownst",
    de: "heimlich* unbemerkt* ohne~es~zu~sagen ohne~dem~nutzer",
    fr: "secretement discretement sans~le~dire sans~prevenir sans~informer",
    es: "secretamente en~secreto sin~avisar sin~decirle sin~informar",
    it: "segretamente di~nascosto senza~avvisare senza~dire senza~informare",
    pt: "secretamente em~segredo sem~avisar sem~contar sem~informar",
    nl: "stiekem heimelijk zonder~te~melden",
    ru: "таино тайно незаметно скрытно не~сообщая",
    sv: "i~hemlighet",
    da: "i~hemmelighed",
    no: "i~hemmelighet",
    fi: "salaa",
    tr: "gizlice",
    hu: "titokban",
    cs: "tajne",
    ro: "in~secret",
    ca: "en~secret",
    sl: "skrivaj",
    ar: "سرا",
    hy: "գաղտնի",
    eu: "ezkutuan",
    ga: "faoi~runda",
    ta: "ரகசியமாக"
  },
  SCAM: {
    en: "urgent urgently immediately suspended locked compromised hacked infected virus expired cancelled canceled " +
      "prize winner reward fee fees penalty overdue regardless no~matter even~if falsely pretend deny claim insist " +
      "convince guaranteed risk-free act~now last~chance verify savings",
    de: "dringend sofort gesperrt gehackt abgelaufen storniert gewinn* gebuhr* trotzdem stattdessen",
    fr: "urgent immediatement suspendu bloque pirate expire annule gagne* frais quand~meme plutot",
    es: "urgente inmediatamente suspendid* bloquead* hackead* expirad* cancelad* premio* tarifa* aun~asi en~su~lugar",
    it: "urgente subito sospes* bloccat* scadut* annullat* premio* tassa* comunque invece",
    pt: "urgente imediatamente suspens* bloquead* expirad* cancelad* premio* taxa* mesmo~assim em~vez",
    nl: "dringend onmiddellijk geblokkeerd verlopen geannuleerd prijs kosten toch",
    ru: "срочно немедленно заблокирован* взлом* истек* отменен* приз* комисси* вместо"
  },
  FIRST: {
    en: "i i'm im me my myself we our us mine",
    de: "ich mich mir mein meine wir uns",
    fr: "je moi me ma mes nous",
    es: "yo me mi mis nosotros",
    it: "io mi me mio mia miei noi",
    pt: "eu me meu minha nos",
    nl: "ik mij me mijn wij",
    ru: "я мне меня мои мой мы",
    sv: "jag mig min mina vi",
    da: "jeg mig min mine vi",
    no: "jeg meg min mine vi",
    fi: "mina minun minua me",
    tr: "ben bana benim",
    hu: "en nekem engem",
    cs: "ja me muj",
    ro: "eu mie meu mea",
    ca: "meu",
    sl: "jaz mene moj",
    ar: "انا",
    hy: "ես",
    eu: "ni nire",
    ga: "me mo",
    ta: "நான"
  },
  READ: {
    en: "reading reads processing processes summarizing summarising summarizes parsing parses crawling crawls " +
      "browsing scanning indexing analyzing analysing ingesting sees viewing visiting retrieving",
    de: "liest lesend* verarbeitet* zusammenfass*",
    fr: "lisant lisez traitant resumant analysant",
    es: "leyendo lee procesando resumiendo analizando",
    it: "leggendo legge elaborando riassumendo analizzando",
    pt: "lendo le processando resumindo analisando",
    nl: "leest lezend* verwerkt* samenvat*",
    ru: "читающ* читает обрабатыва* анализиру*",
    sv: "laser lasande bearbetar",
    da: "laeser behandler",
    no: "leser behandler",
    fi: "lukee lukeva kasittelee",
    tr: "okuyan okuyor isleyen",
    hu: "olvas* feldolgoz*",
    cs: "cte ctouci zpracovava*",
    ro: "citeste citind proceseaza",
    ca: "llegint llegeix",
    sl: "bere bere*",
    ar: "يقرا* يعالج*",
    hy: "կարդացող*",
    eu: "irakurtzen*",
    ga: "leamh*",
    ta: "படிககும*"
  },
  META: {
    en: "injection injections et~al blog blogpost article articles paper papers essay talk lecture slides " +
      "presentation workshop course " +
      "podcast newsletter research researcher researchers study studies example examples known~as called " +
      "jailbreak jailbreaks jailbreaking technique techniques attack attacks vulnerability vulnerabilities " +
      "phrase phrases famous classic explains explained explaining writing wrote write book chapter tutorial " +
      "tutorials red~team red~teaming ctf research* attacker* security~training awareness quiz slide",
    de: "artikel beispiel* vortrag* angriff* blog",
    fr: "article* exemple* attaque* conference* blog",
    es: "articulo* ejemplo* ataque* charla* blog",
    it: "articolo* esempio* attacco* blog",
    pt: "artigo* exemplo* ataque* palestra* blog"
  }
}

/** One vocabulary entry, folded: its words (each exact or a stem) and the concepts it carries. */
export interface Entry {
  readonly words: ReadonlyArray<{ readonly text: string; readonly stem: boolean }>
  readonly mask: number
}

/** The entries, keyed by the first three characters of their first word (the whole word if shorter). */
export type Index = ReadonlyMap<string, ReadonlyArray<Entry>>

const foldEntry = (text: string): string =>
  text.toLowerCase().normalize("NFKD").replace(/\p{M}+/gu, "").normalize("NFC")

const keyOf = (word: string): string => word.slice(0, 3)

const parse = (source: string, mask: number): ReadonlyArray<Entry> =>
  source.split(/\s+/).filter((s) => s.length > 0).map((spec) => ({
    words: spec.split(/[~'-]/).filter((word) => word.length > 0).map((word) => {
      const stem = word.endsWith("*")
      return { text: foldEntry(stem ? word.slice(0, -1) : word), stem }
    }),
    mask
  }))

/** Every entry of the vocabulary, folded. */
export const entries: ReadonlyArray<Entry> = Object.entries(vocabulary).flatMap(([concept, languages]) =>
  Object.values(languages).flatMap((source) => parse(source, C[concept as Concept]))
)

/** The English entries: the ones ROT13 and reversed text are read against. */
export const englishEntries: ReadonlyArray<Entry> = Object.entries(vocabulary).flatMap(([concept, languages]) =>
  parse(languages["en"] ?? "", C[concept as Concept])
)

/** An index of `list` by the first three characters of each entry's first word, after `map`. */
export const indexOf = (list: ReadonlyArray<Entry>, map: (word: string) => string = (w) => w): Index => {
  const index = new Map<string, Array<Entry>>()
  for (const entry of list) {
    const mapped: Entry = { ...entry, words: entry.words.map((w) => ({ ...w, text: map(w.text) })) }
    const key = keyOf(mapped.words[0]!.text)
    const bucket = index.get(key)
    if (bucket === undefined) index.set(key, [mapped])
    else bucket.push(mapped)
  }
  return index
}

/** True when `token` is the entry word: equal to it, or (a stem) starting with it. */
export const wordMatches = (word: Entry["words"][number], token: string): boolean =>
  word.stem ? token.startsWith(word.text) : token === word.text

/** The index key a token is looked up under. */
export const lookupKey = keyOf

/** The people whose later questions a standing answer reaches: "any user", "whenever a customer asks". */
const PEOPLE_ASKING = ["user", "users", "customer", "customers", "caller", "callers", "visitor", "visitors"]

/**
 * The words of a standing answer and of help kept away (decision 0135), read by their rules
 * (`screenRules`) and sent the long way by the fast path (`screenAnchors`): written once, so the
 * anchors cannot miss a word a rule reads.
 */
export const STANDING_WORDS = {
  /** What other people's later questions are called: "any question", "every customer". */
  scopeNouns: [
    "question",
    "questions",
    "request",
    "requests",
    "query",
    "queries",
    "answer",
    "answers",
    "reply",
    "replies",
    "response",
    "responses",
    "chat",
    "chats",
    "conversation",
    "conversations",
    "message",
    "messages",
    ...PEOPLE_ASKING,
    "call",
    "calls",
    "lookup",
    "lookups",
    "search",
    "searches"
  ],
  /** Who asks, by name: "whenever a customer asks". */
  askers: [
    ...PEOPLE_ASKING,
    "client",
    "patient",
    "someone",
    "somebody"
  ],
  /** Where help is sought, and the verbs of seeking it: "no need to see a doctor". */
  helpPlaces: [
    "doctor",
    "doctors",
    "physician",
    "hospital",
    "emergency",
    "ambulance",
    "911",
    "112",
    "999",
    "police",
    "er",
    "gp",
    "poison"
  ],
  seekVerbs: ["see", "call", "contact", "visit", "go", "seek", "phone", "ring", "dial"],
  /** Asking, wanting: "anyone who asks", "when someone wants". */
  asking: [
    "ask",
    "asks",
    "asked",
    "asking",
    "want",
    "wants",
    "need",
    "needs",
    "request",
    "requests",
    "mention",
    "mentions",
    "say",
    "says",
    "write",
    "writes",
    "contact",
    "contacts",
    "try",
    "tries"
  ]
} as const
