import type { Hono } from "hono";
import type { AppEnv } from "../../http/types.js";
import type { Payments } from "../../ports/payments.js";
import { ErrorPage, htmlErrors, Layout, pageHeaders } from "../account/index.js";
import { type PlanCard, PlansTable, planCards } from "../billing/index.js";
import { registerFavicon } from "../shared/favicon.js";

/** One example per public endpoint: path and query, and what it answers. */
const LOOKUPS: { title: string; path: string; what: string }[] = [
  { title: "Moon", path: "/v1/moon?date=2024-01-25&lat=51.5&lon=-0.1", what: "phase, illumination, rise and set" },
  { title: "Sun", path: "/v1/sun?lat=51.5&lon=-0.1&date=2024-06-21", what: "sunrise, sunset, twilights, day length" },
  { title: "Public holidays", path: "/v1/holidays?country=GB&region=SCT&year=2026", what: "a country's holidays" },
  {
    title: "Working days",
    path: "/v1/holidays/working-days?country=DE&date=2026-12-24&add=3",
    what: "is it a working day, and N working days later",
  },
  { title: "VAT rates", path: "/v1/vat?code=DE&date=2026-01-01", what: "rates in force on a date, with sources" },
  { title: "UK postcode", path: "/v1/postcode?postcode=SW1A%202AA", what: "where a postcode is" },
  { title: "Weather", path: "/v1/weather?postcode=SW1A%202AA", what: "current conditions and a 7-day forecast" },
];

function HomePage(props: { origin: string; demoHourlyLimit: number; plans: PlanCard[]; purchasable: boolean }) {
  const { origin, demoHourlyLimit } = props;
  return (
    <Layout title="Small, exact lookups over HTTP">
      <h1>Almanac</h1>
      <p>
        A small, fast JSON API: the Moon and the Sun, public holidays and working days, VAT rates, UK postcodes and the
        weather — computed offline or fetched from named sources, with exact errors. Every lookup below works without a
        key: {demoHourlyLimit} calls an hour per address (the demo tier).
      </p>
      <p>
        <a href="/docs">API reference (try it in the browser)</a> · <a href="/account">Get an API key</a> ·{" "}
        <a href="/v1/openapi.json">OpenAPI document</a>
      </p>
      <h2>Lookups</h2>
      <dl class="examples">
        {LOOKUPS.map((l) => (
          <>
            <dt>
              {l.title} — <span class="hint">{l.what}</span>
            </dt>
            <dd>
              <pre>
                <code>curl '{origin + l.path}'</code>
              </pre>
            </dd>
          </>
        ))}
      </dl>
      <h2>With a key</h2>
      <p>
        Sentiment of up to 20 texts, for servers (keep the key out of web pages). Create a key on the{" "}
        <a href="/account">account page</a>; <code>/v1/usage</code> shows its quota.
      </p>
      <pre>
        <code>{`curl ${origin}/v1/vibe/classify \\\n  -H "Authorization: Bearer $ALMANAC_KEY" \\\n  -H 'Content-Type: application/json' \\\n  -d '["What a lovely day", "The train is late again"]'`}</code>
      </pre>
      <PlansTable cards={props.plans} configured={props.purchasable} />
      <p class="hint">
        Errors always look like <code>{'{"error":{"code","message","reason"?,"request_id"}}'}</code>, and every response
        carries <code>X-Request-Id</code>.
      </p>
    </Layout>
  );
}

/** `GET /`: what Almanac is, an example per lookup, and the way to the docs and to a key. */
export function registerHome(app: Hono<AppEnv>, demoHourlyLimit: number, payments?: Payments): void {
  // A browser that mistypes a page (`/acount`, `/docs/`) gets a page; API clients keep JSON.
  const pages = htmlErrors(ErrorPage);
  app.use("*", (c, next) => (isApiPath(c.req.path) ? next() : pages(c, next)));
  registerFavicon(app);
  app.use("/", pageHeaders());
  app.get("/", async (c) =>
    c.html(
      <HomePage
        origin={new URL(c.req.url).origin}
        demoHourlyLimit={demoHourlyLimit}
        plans={await planCards(payments)}
        purchasable={payments !== undefined}
      />,
    ),
  );
}

/** Paths whose every answer is JSON, whatever the client accepts. */
const isApiPath = (path: string) =>
  /^\/(v1|api)(\/|$)/.test(path) || ["/healthz", "/readyz", "/metrics"].includes(path);
