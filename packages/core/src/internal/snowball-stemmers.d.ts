// The package ships no types; this is the part of its API the tokenizer uses.
declare module "snowball-stemmers" {
  interface Stemmer {
    readonly stem: (word: string) => string
  }
  const snowball: {
    readonly newStemmer: (language: string) => Stemmer
    readonly algorithms: () => ReadonlyArray<string>
  }
  export default snowball
}
