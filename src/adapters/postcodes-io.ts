import { z } from "zod";
import type { Metrics } from "../ports/metrics.js";
import type { PostcodeResolver, Resolution } from "../ports/postcode-resolver.js";
import { getJson, type UpstreamOptions, upstreamDeadline, upstreamFailure } from "./upstream-http.js";

const text = z
  .string()
  .nullish()
  .transform((v) => v ?? null);
const num = z
  .number()
  .nullish()
  .transform((v) => v ?? null);

/** The fields we use of postcodes.io's Postcode schema (it has many more). */
const PostcodeResult = z.object({
  postcode: z.string(),
  outcode: z.string(),
  incode: z.string(),
  latitude: num,
  longitude: num,
  eastings: num,
  northings: num,
  country: text,
  region: text,
  admin_district: text,
  admin_county: text,
  admin_ward: text,
  parish: text,
  parliamentary_constituency: text,
});

const Found = z.object({ status: z.literal(200), result: PostcodeResult });
const Terminated = z.object({
  status: z.literal(200),
  result: z.object({ postcode: z.string(), year_terminated: z.number().int(), month_terminated: z.number().int() }),
});
/**
 * postcodes.io's own "no such postcode" answers (its lib/errors.ts). Any other 404, such as
 * "Resource not found" for a path it does not serve (a wrong POSTCODES_BASE_URL), is a failure:
 * taken as "unknown", every postcode would be cached as not found for an hour.
 */
const NotFound = z.object({
  status: z.literal(404),
  error: z.enum(["Postcode not found", "Invalid postcode", "Terminated postcode not found"]),
});

/**
 * postcodes.io: `GET /postcodes/{postcode}`, and on 404 `GET /terminated_postcodes/{postcode}`
 * to tell a retired postcode from one that never existed; both within one UPSTREAM_TIMEOUT_MS.
 */
export class PostcodesIoResolver implements PostcodeResolver {
  private readonly upstream: UpstreamOptions;

  constructor(opts: { baseUrl: string; timeoutMs: number; maxBytes: number; metrics: Metrics }) {
    this.upstream = { name: "postcodes.io", ...opts };
  }

  async resolve(postcode: string): Promise<Resolution> {
    // The caller validated the postcode; encoding still guarantees it stays one path segment.
    const segment = encodeURIComponent(postcode);
    const deadline = upstreamDeadline(this.upstream);
    const live = await this.lookup(`/postcodes/${segment}`, Found, deadline);
    if (live) {
      const { postcode: pc, ...rest } = live.result;
      return { kind: "found", place: { postcode: pc, ...rest } };
    }
    const gone = await this.lookup(`/terminated_postcodes/${segment}`, Terminated, deadline);
    if (gone) {
      const r = gone.result;
      return { kind: "terminated", postcode: r.postcode, year: r.year_terminated, month: r.month_terminated };
    }
    return { kind: "unknown" };
  }

  /** The parsed 200 body, or null for postcodes.io's JSON 404; anything else is a failure. */
  private async lookup<S extends z.ZodType>(
    path: string,
    schema: S,
    deadline: AbortSignal,
  ): Promise<z.infer<S> | null> {
    const reply = await getJson(this.upstream, path, deadline);
    if (reply.status === 404 && NotFound.safeParse(reply.body).success) return null;
    if (reply.status !== 200) return upstreamFailure(this.upstream, "status", `status ${reply.status}`, reply.status);
    const parsed = schema.safeParse(reply.body);
    if (!parsed.success) return upstreamFailure(this.upstream, "garbage", "unexpected body");
    return parsed.data;
  }
}
