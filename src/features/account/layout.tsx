import { raw } from "hono/html";
import type { Child } from "hono/jsx";
import { FAVICON_PATH } from "../shared/favicon.js";

/** The one page layout: the account pages and the home page. */
export function Layout(props: { title: string; children: Child; refresh?: { sec: number; url: string } }) {
  // The doctype keeps browsers out of quirks mode (JSX cannot write it).
  return (
    <>
      {raw("<!doctype html>")}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>{props.title} · Almanac</title>
          {props.refresh && <meta http-equiv="refresh" content={`${props.refresh.sec};url=${props.refresh.url}`} />}
          <link rel="icon" href={FAVICON_PATH} type="image/svg+xml" />
          <link rel="stylesheet" href="/account/assets/account.css" />
          <script src="/account/assets/account.js" defer></script>
        </head>
        <body>
          <a href="#main" class="skip">
            Skip to content
          </a>
          <header>
            <nav aria-label="Almanac">
              <a href="/" class="brand">
                Almanac
              </a>{" "}
              · <a href="/docs">API reference</a> · <a href="/account">Account and keys</a>
            </nav>
          </header>
          <main id="main">{props.children}</main>
        </body>
      </html>
    </>
  );
}
