import { UpstreamFake } from "./upstream-fake.js";

/** A postcodes.io Postcode result (the published schema; fields we do not read are kept for realism). */
export interface PostcodeRecord {
  postcode: string;
  quality: number;
  eastings: number | null;
  northings: number | null;
  country: string;
  longitude: number | null;
  latitude: number | null;
  region: string | null;
  outcode: string;
  incode: string;
  parliamentary_constituency: string | null;
  admin_district: string | null;
  parish: string | null;
  admin_county: string | null;
  admin_ward: string | null;
  codes: Record<string, string>;
}

const record = (r: Omit<PostcodeRecord, "outcode" | "incode" | "codes" | "quality">): PostcodeRecord => {
  const [outcode = "", incode = ""] = r.postcode.split(" ");
  return { quality: r.latitude === null ? 9 : 1, outcode, incode, codes: {}, ...r };
};

export const POSTCODES: PostcodeRecord[] = [
  record({
    postcode: "SW1A 2AA",
    eastings: 530047,
    northings: 179951,
    country: "England",
    longitude: -0.127695,
    latitude: 51.50354,
    region: "London",
    parliamentary_constituency: "Cities of London and Westminster",
    admin_district: "Westminster",
    parish: "Westminster, unparished area",
    admin_county: null,
    admin_ward: "St James's",
  }),
  record({
    postcode: "EH1 1YZ",
    eastings: 325710,
    northings: 673845,
    country: "Scotland",
    longitude: -3.190382,
    latitude: 55.952055,
    region: null,
    parliamentary_constituency: "Edinburgh East and Musselburgh",
    admin_district: "City of Edinburgh",
    parish: null,
    admin_county: null,
    admin_ward: "City Centre",
  }),
  // Channel Islands: in the directory without a grid reference, so no coordinates.
  record({
    postcode: "GY1 1AA",
    eastings: null,
    northings: null,
    country: "Channel Islands",
    longitude: null,
    latitude: null,
    region: null,
    parliamentary_constituency: null,
    admin_district: null,
    parish: null,
    admin_county: null,
    admin_ward: null,
  }),
];

export const TERMINATED = [
  { postcode: "E1W 1UU", year_terminated: 2007, month_terminated: 12, longitude: -0.051135, latitude: 51.508774 },
];

const key = (segment: string) => decodeURIComponent(segment).replace(/\s+/g, "").toUpperCase();

/**
 * postcodes.io on 127.0.0.1: `GET /postcodes/{postcode}` and `GET /terminated_postcodes/{postcode}`
 * (any case or spacing), with its `{status, result}` / `{status: 404, error}` bodies.
 */
export function fakePostcodesIo(records = POSTCODES, terminated = TERMINATED): Promise<UpstreamFake> {
  const live = new Map(records.map((r) => [key(r.postcode), r]));
  const gone = new Map(terminated.map((r) => [key(r.postcode), r]));
  return new UpstreamFake((url) => {
    const m = /^\/(postcodes|terminated_postcodes)\/([^/]+)$/.exec(url.pathname);
    if (!m) return { status: 404, body: { status: 404, error: "Resource not found" } };
    const [, kind, segment = ""] = m;
    if (kind === "postcodes") {
      const r = live.get(key(segment));
      return r ? { status: 200, body: { status: 200, result: r } } : { status: 404, body: notFound("Postcode") };
    }
    const t = gone.get(key(segment));
    return t
      ? { status: 200, body: { status: 200, result: t } }
      : { status: 404, body: notFound("Terminated postcode") };
  }).start();
}

const notFound = (what: string) => ({ status: 404, error: `${what} not found` });
