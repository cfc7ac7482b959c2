import type { HolidaysTypes } from "date-holidays";

/**
 * Where Almanac departs from the date-holidays data, each with the statute or official source
 * that decides it. Applied with date-holidays' own rule grammar (`setHoliday`), so substitute
 * days, names and types behave like the data's.
 */
export interface HolidayOverride {
  country: string;
  /** Which calendar: "" the country's national set only, or one region code. */
  region: string;
  /** A date-holidays rule this one replaces (removed first). */
  replaces?: string;
  /** date-holidays rule grammar ("12-25 and if saturday then next monday", "2026-06-15"…). */
  rule: string;
  /** English name first, then local names by language code. */
  name: { en: string; [lang: string]: string };
  type: HolidaysTypes.HolidayType;
  /**
   * Whether most employees have the day off; by default every full-day public holiday. A number
   * n: only in years divisible by n (a holiday many collective agreements give every n years).
   */
  dayOff?: boolean | number;
  note?: string;
  source: string;
}

const CLC = "Canada Labour Code, R.S.C. 1985, c. L-2";
const CLC_166 = `${CLC}, s. 166 (general holidays)`;
const CLC_193 = `${CLC}, s. 193(2): on a non-working Saturday or Sunday, a holiday with pay on the working day before or after; federal employers (Treasury Board) use the following Monday, and Tuesday for the second of two`;
const SAT_SUN_MONDAY = "and if saturday,sunday then next monday";
const CHRISTMAS_PAIR = "and if saturday then next monday if sunday then next tuesday";
/** A federal general holiday of Canada's national set. */
const federal = (o: Omit<HolidayOverride, "country" | "region" | "type">): HolidayOverride => ({
  country: "CA",
  region: "",
  type: "public",
  ...o,
});
const RIJKSOVERHEID =
  "Rijksoverheid, Officiële feestdagen (rijksoverheid.nl, Arbeidsovereenkomst en cao): no law makes any holiday a day off; the cao or employment contract does";

export const HOLIDAY_OVERRIDES: readonly HolidayOverride[] = [
  {
    country: "GB",
    region: "SCT",
    rule: "2026-06-15",
    name: { en: "Additional bank holiday (FIFA World Cup)" },
    type: "public",
    source: "Scottish Government, proclaimed by the King under the Banking and Financial Dealings Act 1971",
  },
  // Canada, national set = the federal general holidays (federally regulated employment).
  federal({
    replaces: "01-01",
    rule: `01-01 ${SAT_SUN_MONDAY}`,
    name: { en: "New Year's Day", fr: "Jour de l'An" },
    source: `${CLC_166}; ${CLC_193}`,
  }),
  federal({
    replaces: "easter -2",
    rule: "easter -2",
    name: { en: "Good Friday", fr: "Vendredi saint" },
    source: CLC_166,
  }),
  federal({
    rule: "monday before 05-25",
    name: { en: "Victoria Day", fr: "Fête de la Reine" },
    source: CLC_166,
  }),
  federal({
    replaces: "07-01",
    rule: `07-01 ${SAT_SUN_MONDAY}`,
    name: { en: "Canada Day", fr: "Fête du Canada" },
    source: `${CLC_166}; Holidays Act, R.S.C. 1985, c. H-5, s. 2 (a Sunday 1 July is kept on Monday 2 July); ${CLC_193}`,
  }),
  federal({
    replaces: "1st monday in September",
    rule: "1st monday in September",
    name: { en: "Labour Day", fr: "Fête du Travail" },
    source: CLC_166,
  }),
  federal({
    replaces: "09-30 since 2021",
    rule: "09-30 since 2021",
    name: {
      en: "National Day for Truth and Reconciliation",
      fr: "Journée nationale de la vérité et de la réconciliation",
    },
    note: "A general holiday for federally regulated employment; provinces decide for the rest.",
    source: `${CLC_166}, as amended by S.C. 2021, c. 11`,
  }),
  federal({
    rule: "2nd monday after 10-01",
    name: { en: "Thanksgiving", fr: "Action de grâce" },
    source: CLC_166,
  }),
  federal({
    rule: `11-11 ${SAT_SUN_MONDAY}`,
    name: { en: "Remembrance Day", fr: "Jour du Souvenir" },
    source: `${CLC_166}; ${CLC_193}`,
  }),
  federal({
    replaces: "12-25",
    rule: `12-25 ${CHRISTMAS_PAIR}`,
    name: { en: "Christmas Day", fr: "Noël" },
    source: `${CLC_166}; ${CLC_193}`,
  }),
  federal({
    rule: `12-26 ${CHRISTMAS_PAIR}`,
    name: { en: "Boxing Day", fr: "Lendemain de Noël" },
    source: `${CLC_166}; ${CLC_193}`,
  }),
  {
    country: "CA",
    region: "ON",
    replaces: "easter 1",
    rule: "easter 1",
    name: { en: "Easter Monday", fr: "Lundi de Pâques" },
    type: "optional",
    note: "Not a public holiday under Ontario's Employment Standards Act; a day off for federal employees and some others.",
    source: "Employment Standards Act, 2000, S.O. 2000, c. 41, s. 1(1) (public holidays)",
  },
  {
    country: "CA",
    region: "BC",
    rule: "09-30 since 2023",
    name: {
      en: "National Day for Truth and Reconciliation",
      fr: "Journée nationale de la vérité et de la réconciliation",
    },
    type: "public",
    source:
      'Employment Standards Act (British Columbia), s. 1 "statutory holiday", as amended in 2023 (Employment Standards Amendment Act, 2023)',
  },
  ...(["easter -2", "easter 1"] as const).map(
    (rule): HolidayOverride => ({
      country: "CA",
      region: "QC",
      replaces: rule,
      rule,
      name:
        rule === "easter 1"
          ? { en: "Easter Monday", fr: "Lundi de Pâques" }
          : { en: "Good Friday", fr: "Vendredi saint" },
      type: rule === "easter 1" ? "optional" : "public",
      note: "Quebec's statute gives Good Friday or Easter Monday, at the employer's option: most give Good Friday.",
      source: "Act respecting labour standards, CQLR c. N-1.1, s. 60",
    }),
  ),
  // Netherlands: official holidays, days off only by collective agreement.
  {
    country: "NL",
    region: "",
    replaces: "easter -2",
    rule: "easter -2",
    name: { en: "Good Friday", nl: "Goede Vrijdag" },
    type: "public",
    dayOff: false,
    note: "An official holiday, but most employers do not give it off: a day off only where the cao or contract says so (often the civil service).",
    source: RIJKSOVERHEID,
  },
  {
    country: "NL",
    region: "",
    replaces: "05-05",
    rule: "05-05",
    name: { en: "Liberation Day", nl: "Bevrijdingsdag" },
    type: "public",
    dayOff: 5,
    note: "A national holiday (since 1990). Many cao's give it off only every fifth year (2025, 2030…), which is when `day_off` is true; the civil service and education every year.",
    source: RIJKSOVERHEID,
  },
];
