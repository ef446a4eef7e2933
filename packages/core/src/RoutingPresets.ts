/**
 * Two opt-in routing presets, each a section vocabulary plus the spec that routes into it. An
 * agent gets neither unless its author declares the sections (merge the preset's Background into
 * the agent's) and names the spec.
 *
 * Both key a record by its label — folded to the canonical key the preset declares for it, when it
 * declares one (`Routing.deriveKey`) — or, when the label names no declared key, by the
 * single-valued key its content states; otherwise by its label, or by its content when it has no
 * label.
 *
 * - {@link userBackground} — for companions: who the user is and how they like things. It
 *   declares a key vocabulary ({@link userBackgroundKeys}: name, preferred name, pronouns,
 *   location, time zone, …, each with the aliases models use), so `first_name`, `Full name` and
 *   `user_name` are one address. `profile` records go to `about_user` (auto), and so do `fact` and
 *   `note` records whose label folds to a declared `about_user` key or whose content states a
 *   single-valued one ("My name is Doug"); `standing` records, and
 *   `profile` records tagged `preference`/`preferences`, go to `preferences` (guarded).
 * - {@link project} — for agents working on a project: `decision` records go to
 *   `project_state` (auto); `standing` records, and `fact`/`note` records tagged
 *   `convention`/`conventions`, go to `conventions` (guarded). It never places a `profile`
 *   record or anything tagged as a preference, so user facts stay out of project sections.
 *
 * @since 0.1.0
 */
import * as Background from "./Background.js"
import type { MemoryKind } from "./MemoryRecord.js"
import {
  background,
  deriveKey,
  finalizeOldestFirst,
  foldLabel,
  type KeyVocabulary,
  type MemoryRoutingSpec,
  type Placement,
  type RoutableRecord,
  slugify,
  statedKeyOf
} from "./Routing.js"

const taggedAs = (record: RoutableRecord, names: ReadonlyArray<string>): boolean =>
  record.tags.some((tag) => names.includes(slugify(tag)))

const placeIn = (keys: KeyVocabulary | undefined) => (section: string, record: RoutableRecord): Placement =>
  background(section, deriveKey({ keys }, section, record).key)

const preferenceTags = ["preference", "preferences"]
const conventionTags = ["convention", "conventions"]

/**
 * The user-background vocabulary: `about_user` ("About the User", `auto`) and `preferences`
 * ("Preferences", `guarded`), both empty.
 *
 * @since 0.1.0
 * @category presets
 */
export const userBackgroundSections: Background.Background = Background.unsafeMake({
  sections: [
    { id: "about_user", title: "About the User", promotion: "auto" },
    { id: "preferences", title: "Preferences", promotion: "guarded" }
  ]
})

/**
 * The keys {@link userBackground} declares: for `about_user`, who the user is; for `preferences`,
 * how they like to be answered. Each canonical key lists the other names models give the same
 * thing (as labels like `first_name`, `Full name`, `userName`, `my name`); a label folds to its
 * canonical key whatever its case, spacing or punctuation (`Routing.foldLabel`). Distinct facts
 * keep distinct keys: a partner is not "family", a home town is not the current location.
 *
 * The order is the order of importance (name first, pets last): what survives a budget is chosen
 * by it. Name, surname, preferred name, pronouns, location, time zone and birthday are `single`: one value
 * at a time, recognised in content ("My name is Douglas", "I live in Bergen") whatever the label.
 *
 * @since 0.1.0
 * @category presets
 */
export const userBackgroundKeys: KeyVocabulary = {
  about_user: [
    {
      key: "name",
      single: true,
      statements: [/\b(?:i am|i'm|im|the user is|user is) (?:called|named)\b/u],
      description: "the user's name",
      aliases: [
        "user name",
        "username",
        "user's name",
        "users name",
        "name of user",
        "my name",
        "first name",
        "firstname",
        "given name",
        "full name",
        "fullname",
        "user full name",
        "real name",
        "legal name",
        "called"
      ]
    },
    {
      key: "surname",
      single: true,
      description: "the user's family name",
      aliases: ["last name", "lastname", "family name", "second name", "user surname", "user last name"]
    },
    {
      key: "preferred_name",
      single: true,
      statements: [/\bcall (?:me|him|her|them)\b/u, /\b(?:prefers|likes|wants) to be called\b/u],
      description: "what the user likes to be called",
      aliases: ["nickname", "nick name", "goes by", "call me", "how to address", "address as", "form of address"]
    },
    {
      key: "pronouns",
      single: true,
      statements: [/\buses? (?:she|he|they|xe|ze|it) ?\/ ?[a-z]+/u],
      description: "the user's pronouns",
      aliases: ["pronoun", "preferred pronouns", "user pronouns"]
    },
    {
      key: "location",
      single: true,
      statements: [
        /(?:^|[^a-z])(?:i|user|they|he|she) (?:live|lives|living|moved|relocated) (?:in|to)\b/u,
        /\b(?:i am|i'm|im|user is) based in\b/u
      ],
      description: "where the user lives now",
      aliases: [
        "home",
        "lives in",
        "city",
        "current city",
        "residence",
        "user location",
        "based in",
        "where user lives"
      ]
    },
    {
      key: "time_zone",
      single: true,
      description: "the user's time zone",
      aliases: ["timezone", "tz", "user timezone", "user time zone", "local time zone"]
    },
    {
      key: "language",
      description: "the language the user speaks",
      aliases: ["languages", "native language", "first language", "mother tongue", "spoken language", "user language"]
    },
    {
      key: "occupation",
      description: "the user's work",
      aliases: ["job", "job title", "profession", "work", "career", "role", "position", "user occupation"]
    },
    {
      key: "birthday",
      single: true,
      statements: [/\bborn on\b/u],
      description: "the user's date of birth",
      aliases: ["birth date", "birthdate", "date of birth", "dob", "bday", "born on"]
    },
    {
      key: "partner",
      description: "the user's partner",
      aliases: ["spouse", "wife", "husband", "girlfriend", "boyfriend", "significant other"]
    },
    { key: "children", description: "the user's children", aliases: ["kids", "child", "sons", "daughters"] },
    { key: "family", description: "the user's wider family", aliases: ["family members", "relatives", "household"] },
    { key: "pets", description: "the user's pets", aliases: ["pet", "pet names", "animals"] }
  ],
  preferences: [
    {
      key: "communication_style",
      description: "tone and style of answers",
      aliases: ["tone", "style", "writing style", "voice"]
    },
    {
      key: "response_length",
      description: "how long answers should be",
      aliases: ["length", "answer length", "verbosity", "detail level"]
    },
    {
      key: "reply_language",
      description: "the language to answer in",
      aliases: ["answer language", "response language", "language preference"]
    },
    {
      key: "units",
      description: "units of measure",
      aliases: ["unit system", "measurement units", "measurement system"]
    }
  ]
}

const userPlace = placeIn(userBackgroundKeys)
const labelKinds: ReadonlyArray<MemoryKind> = ["fact", "note"]

/**
 * True when the record's label folds to a key `about_user` declares (as the key or an alias), or
 * its content states a single-valued `about_user` key ("My name is Doug", decision 0056).
 */
const namesProfileKey = (record: RoutableRecord): boolean => {
  const folded = record.label === undefined
    ? undefined
    : foldLabel({ keys: userBackgroundKeys }, "about_user", record.label)
  if (folded !== undefined && folded.keySource !== "label") return true
  return statedKeyOf({ keys: userBackgroundKeys }, record.content)?.section === "about_user"
}

/**
 * Routes what a companion learns about its user: `standing` records and `profile` records tagged
 * `preference`/`preferences` to `preferences`; other `profile` records to `about_user`, and so
 * `fact` and `note` records whose label folds to a key `about_user` declares (a name saved as a
 * `fact` labelled `first_name` is the user's name); every other record declined. Keys fold by
 * {@link userBackgroundKeys}, so a promotion row's `keySource` says `canonical` or `alias` when a
 * declared name gave the key.
 *
 * @since 0.1.0
 * @category presets
 */
export const userBackground: MemoryRoutingSpec = {
  key: "user-background",
  // 2: keys fold through the declared vocabulary, and a fact or note labelled with a declared key
  // is placed. 3: a record whose label names no declared key (or that has none) takes the
  // single-valued key its content states, and a fact or note stating one is placed (decisions
  // 0055, 0056). 4: `surname` is declared, and a single-valued key the content states beats the
  // key the label names (decision 0170). Rows promoted under earlier versions keep the address
  // they were given then.
  version: "4",
  keys: userBackgroundKeys,
  route: (record) => {
    if (record.kind === "standing" || (record.kind === "profile" && taggedAs(record, preferenceTags))) {
      return userPlace("preferences", record)
    }
    if (record.kind === "profile" || (labelKinds.includes(record.kind) && namesProfileKey(record))) {
      return userPlace("about_user", record)
    }
    return null
  },
  finalize: finalizeOldestFirst
}

/**
 * The project vocabulary: `project_state` ("Project State", `auto`) and `conventions`
 * ("Conventions", `guarded`), both empty.
 *
 * @since 0.1.0
 * @category presets
 */
export const projectSections: Background.Background = Background.unsafeMake({
  sections: [
    { id: "project_state", title: "Project State", promotion: "auto" },
    { id: "conventions", title: "Conventions", promotion: "guarded" }
  ]
})

const conventionKinds: ReadonlyArray<MemoryKind> = ["fact", "note"]
const projectPlace = placeIn(undefined)

/**
 * Routes what an agent learns about a project: `decision` records to `project_state`;
 * `standing` records and `fact`/`note` records tagged `convention`/`conventions` to
 * `conventions`; `profile` records and anything tagged `preference`/`preferences` declined, as is
 * every other kind.
 *
 * @since 0.1.0
 * @category presets
 */
export const project: MemoryRoutingSpec = {
  key: "project",
  version: "1",
  route: (record) => {
    if (record.kind === "profile" || taggedAs(record, preferenceTags)) return null
    if (record.kind === "decision") return projectPlace("project_state", record)
    if (record.kind === "standing" || (conventionKinds.includes(record.kind) && taggedAs(record, conventionTags))) {
      return projectPlace("conventions", record)
    }
    return null
  },
  finalize: finalizeOldestFirst
}

/**
 * Every preset spec, by key.
 *
 * @since 0.1.0
 * @category presets
 */
export const presets: Readonly<Record<string, MemoryRoutingSpec>> = {
  [userBackground.key]: userBackground,
  [project.key]: project
}
