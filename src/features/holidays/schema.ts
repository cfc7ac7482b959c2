import { z } from "@hono/zod-openapi";
import { intParam } from "../shared/geo-time.js";

const q = (name: string) => ({ param: { name, in: "query" as const } });

export const HOLIDAY_TYPES = ["public", "bank", "optional", "school", "observance"] as const;
export type HolidayTypeName = (typeof HOLIDAY_TYPES)[number];

const country = z
  .string()
  .trim()
  .max(2, "must be an ISO 3166-1 alpha-2 country code such as GB")
  .regex(/^[A-Za-z]{2}$/, "must be an ISO 3166-1 alpha-2 country code such as GB")
  .openapi({ ...q("country"), example: "GB", description: "ISO 3166-1 alpha-2, any case." });

const region = z
  .string()
  .trim()
  .max(40, "must be a subdivision code such as ENG or GB-ENG, or its name")
  .regex(/^[A-Za-z0-9][A-Za-z0-9 _-]{0,39}$/, "must be a subdivision code such as ENG or GB-ENG, or its name")
  .optional()
  .openapi({
    ...q("region"),
    example: "ENG",
    description:
      "Subdivision: ISO 3166-2 suffix (`ENG`, `BY`, `CA`) with or without the country prefix, or its name " +
      "in any case with hyphens for spaces (`scotland`, `northern-ireland`); for GB also gov.uk's " +
      "`england-and-wales` (= `ENG`).",
  });

/** `public` → `[Pp][Uu][Bb][Ll][Ii][Cc]`: a word in any case, as a pattern. */
const caseless = (word: string) => word.replace(/[a-z]/g, (c) => `[${c.toUpperCase()}${c}]`);

/**
 * A list of `allowed` words, any case, sent repeated (`types=public&types=bank`, as openapi-fetch and
 * orval send arrays), comma-separated (`types=public,bank`), or both: at most one value per word,
 * each value one word or several joined by commas (spaces around them allowed). Documented as
 * either an array (`style: form, explode: true`) of the words themselves (an enum, so a generated
 * client types them) or one string of comma-separated words (the pattern). The words come out
 * lower case, each once.
 */
const listOf = <T extends string>(allowed: readonly T[]) => {
  const word = `(?:${allowed.map(caseless).join("|")})`;
  const message = `must be a comma-separated list of ${allowed.join(", ")}`;
  const commaList = z
    .string()
    .max(200, message)
    .regex(new RegExp(`^ *${word} *(?:, *${word} *)*$`), message);
  const words = z
    .array(commaList.openapi({ enum: [...allowed] }))
    .max(allowed.length, `at most ${allowed.length} values`);
  return z
    .union([words, commaList], { error: message })
    .transform((v) => [
      ...new Set((Array.isArray(v) ? v : [v]).flatMap((s) => s.split(",").map((w) => w.trim().toLowerCase() as T))),
    ]);
};
/** Parameter metadata of a list (the explode form a generated client sends). */
const listParam = (name: string) => ({ param: { name, in: "query" as const, style: "form" as const, explode: true } });

export const DAY_OFF_RULES = ["day_off", ...HOLIDAY_TYPES] as const;

const types = listOf(HOLIDAY_TYPES)
  .optional()
  .openapi({
    ...listParam("types"),
    example: ["public", "bank"],
    description:
      "Holiday types to list (default `public`). `bank`: banks (and in some countries offices) close but it is " +
      "not a public holiday, e.g. Germany's 24 and 31 December afternoons, New South Wales' Bank Holiday. " +
      "An array of type names (sent repeated), or one string of them comma-separated, any case.",
  });

export const HolidaysQuery = z.object({
  country,
  region,
  year: intParam(1900, 2199)
    .optional()
    .openapi({ ...q("year"), example: 2024, description: "1900–2199; default: the current year." }),
  types,
});

const WORKING_DATE_INVALID = "must be a date YYYY-MM-DD between 1900 and 2199";

export const WorkingDaysQuery = z.object({
  country,
  region,
  date: z
    .string()
    // Each failing check stops the next (`abort`): one problem, said once in fieldErrors.
    .max(10, { error: WORKING_DATE_INVALID, abort: true })
    .regex(/^(?:19|2[01])\d{2}-\d{2}-\d{2}$/, { error: WORKING_DATE_INVALID, abort: true })
    .refine((s) => {
      const d = new Date(`${s}T00:00:00Z`);
      return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(s) && s >= "1900" && s < "2200";
    }, "must be a real calendar date between 1900 and 2199")
    .optional()
    .openapi({
      ...q("date"),
      format: "date",
      example: "2024-12-24",
      description: "Default: today in the country's time zone.",
    }),
  add: intParam(-1000, 1000)
    .optional()
    .openapi({ ...q("add"), example: 3, description: "Working days to add (negative: subtract), −1000 to 1000." }),
  count: listOf(DAY_OFF_RULES)
    .optional()
    .openapi({
      ...listParam("count"),
      example: ["public", "bank"],
      description:
        "What makes a weekday a day off (default `day_off`): `day_off`, the holidays marked `day_off` (full-day " +
        "public holidays most employees have off); or holiday types, whole or part day — `public` (every public " +
        "holiday, also those most people work, such as the Netherlands' Good Friday), `bank` (New South Wales' " +
        "Bank Holiday, Germany's 24 December), `optional`, `school`, `observance`. An array of them (sent " +
        "repeated), or one string of them comma-separated, any case.",
    }),
});

const PlaceSchema = {
  country: z.object({ code: z.string(), name: z.string() }),
  region: z.object({ code: z.string(), name: z.string() }).nullable(),
  tz: z.string().openapi({ example: "Europe/London", description: "IANA time zone of the country (or region)." }),
  timezone: z.string().openapi({ example: "Europe/London", deprecated: true, description: "Old name of `tz`." }),
  weekend: z.array(z.string()).openapi({ example: ["saturday", "sunday"], description: "From CLDR week data." }),
};

export const HolidaySchema = z
  .object({
    date: z.string().openapi({ example: "2024-12-25" }),
    end_date: z.string().openapi({ example: "2024-12-25", description: "Last day, inclusive." }),
    name: z.string().openapi({ example: "Christmas Day", description: "English where the data has it." }),
    local_name: z.string().openapi({ example: "Christmas Day", description: "In the country's first language." }),
    type: z.enum(HOLIDAY_TYPES).openapi({
      description:
        "`public`: a public holiday by law; `bank`: banks close, not a public holiday; `optional`: taken by " +
        "choice (e.g. by religion); `school`: schools close; `observance`: marked, nobody is off.",
    }),
    substitute: z.boolean().openapi({ description: "A substitute day for a holiday falling on a weekend." }),
    starts_at: z.string().nullable().openapi({
      example: null,
      description: "Local time a part-day holiday starts (e.g. `14:00` on Germany's Christmas Eve); null: all day.",
    }),
    day_off: z.boolean().openapi({
      description:
        "A day off for most employees: a full-day public holiday, unless its source says most people work (the " +
        "Netherlands' Good Friday; Liberation Day outside every fifth year). False for bank-only and part days.",
    }),
    note: z.string().nullable().openapi({
      example: null,
      description: "Why the day is typed or counted as it is, where that is not obvious.",
    }),
    source: z.string().nullable().openapi({
      example: null,
      description: "The statute or official source for an entry Almanac corrects or adds; null: date-holidays' data.",
    }),
  })
  .openapi("Holiday");

export const HolidaysResponse = z
  .object({
    ...PlaceSchema,
    year: z.number().int(),
    types: z.array(z.enum(HOLIDAY_TYPES)),
    holidays: z.array(HolidaySchema),
  })
  .openapi("Holidays");

export const WorkingDaysResponse = z
  .object({
    ...PlaceSchema,
    date: z.string().openapi({ example: "2024-12-24" }),
    weekday: z.string().openapi({ example: "tuesday" }),
    is_weekend: z.boolean(),
    is_working_day: z.boolean(),
    holidays: z.array(HolidaySchema).openapi({ description: "Holidays of any type on `date`." }),
    add: z.number().int().nullable(),
    count: z.array(z.enum(DAY_OFF_RULES)).openapi({
      example: ["day_off"],
      description: "What counted as a day off (the `count` parameter, default `day_off`).",
    }),
    result: z.string().nullable().openapi({
      example: "2024-12-30",
      description: "`date` moved by `add` working days (`add=0`: `date` itself); null without `add`.",
    }),
  })
  .openapi("WorkingDays");
