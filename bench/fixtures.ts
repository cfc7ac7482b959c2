import { POSTCODES } from "../test/fakes/postcodes-io.js";

/** The 20 texts of each classify request in the benchmarks (mixed sentiment, short). */
export const CLASSIFY_TEXTS = [
  "I love this, it made my whole week!",
  "The parcel arrived on Tuesday.",
  "Worst support I have ever had, never again.",
  "Not bad at all, quite pleasant actually.",
  "The meeting is at 3pm in room 4.",
  "This is absolutely terrible and broken :(",
  "Great service, friendly staff, fair prices.",
  "I am not sure how I feel about the update.",
  "The train was late again. So annoying.",
  "What a beautiful sunny morning!",
  "Please find the invoice attached.",
  "I hate waiting on hold for an hour.",
  "The food was okay, nothing special.",
  "Brilliant work, thank you so much!",
  "It rained all day and the roof leaked.",
  "The report covers the third quarter.",
  "Honestly the best coffee in town.",
  "Disappointed, the screen cracked in a day.",
  "Meh.",
  "We are thrilled to announce our new office!",
];

/** Buckingham Palace, added beside the postcodes.io fake's own records so the bench's postcode resolves. */
export const SW1A_1AA = {
  ...POSTCODES[0],
  postcode: "SW1A 1AA",
  outcode: "SW1A",
  incode: "1AA",
  latitude: 51.501009,
  longitude: -0.141588,
} as (typeof POSTCODES)[number];
