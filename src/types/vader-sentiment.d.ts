declare module "vader-sentiment" {
  export interface PolarityScores {
    neg: number;
    neu: number;
    pos: number;
    compound: number;
  }
  /** What SentiText hands to the static rules. */
  export interface SentiTextLike {
    text: string;
    words_and_emoticons: string[];
    is_cap_diff: boolean;
  }
  export const SentimentIntensityAnalyzer: {
    polarity_scores(text: string): PolarityScores;
    sentiment_valence(
      valence: number,
      sentiText: SentiTextLike,
      item: string,
      index: number,
      sentiments: number[],
    ): number[];
    but_check(words: string[], sentiments: number[]): number[];
    score_valence(sentiments: number[], text: string): PolarityScores;
  };
  const vader: { SentimentIntensityAnalyzer: typeof SentimentIntensityAnalyzer };
  export default vader;
}

declare module "vader-sentiment/src/vader_lexicon.js" {
  /** VADER's lexicon: word or emoticon → mean valence (−4…4). */
  export const lexicon: Record<string, number>;
}
