/**
 * English function words, written once: the relevance step (`PriorSessionDigest`, decision 0180)
 * and the search planner (`SearchPlan`'s `pruneFunctionWords`, decision 0209) both read them.
 * Here, not in either, so the planner does not import the digest's module.
 */

/** The words as written (articles, pronouns, prepositions, auxiliaries, conjunctions). */
export const FUNCTION_WORDS: ReadonlyArray<string> =
  ("a about above after again against all also am an and any are as at be because been before being " +
    "below between both but by can could did do does down during each few for from further had has " +
    "have he her here hers herself him himself his how i if in into is it its itself just me might " +
    "more most must my myself no not now of off on once only or other our ours ourselves out over own " +
    "same shall she should so some such than that the their them themselves then there these they " +
    "this those through to too under until up us very was we were what when where which while who " +
    "whom why will with would you your yours yourself").split(" ")

/**
 * {@link FUNCTION_WORDS} as the shared tokenizer folds them ("does" -> "doe"), pinned rather than
 * stemmed at load (core's tests hold it equal to `FUNCTION_WORDS` through `SearchTokenizer.tokenize`).
 */
export const STOPWORDS: ReadonlySet<string> = new Set(
  ("a about abov after again against all also am an and ani are as at be becaus been befor below " +
    "between both but by can could did do doe down dure each few for from further had has have he her " +
    "here herself him himself his how i if in into is it itself just me might more most must my " +
    "myself no not now of off on onc onli or other our ourselv out over own same shall she should so " +
    "some such than that the their them themselv then there these they this those through to too " +
    "under until up us veri was we were what when where whi which while who whom will with would you " +
    "your yourself").split(" ")
)
