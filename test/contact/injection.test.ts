import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf } from "../helpers/app.js";
import { propertyRuns } from "../helpers/env.js";
import { type ContactHarness, contactHarness, DESK } from "./setup.js";

/** Pieces an attacker would splice into a header-bound field. */
const BREAKS = ["\r", "\n", "\r\n", "\u0085", "\u2028", "\u2029", "\r\n\t", "\n "];
const PAYLOADS = [
  "Bcc: eve@evil.test",
  "Cc: eve@evil.test",
  "To: eve@evil.test",
  "X-Injected: yes",
  "Content-Type: text/html",
  "",
];
const TRICKY = ['"', ",", ";", ":", "<", ">", "@", "=?utf-8?b?QmNjOg==?=", "eve@evil.test", " ", "Ünïcødé", "\\", "()"];

const piece = fc.oneof(
  fc.constantFrom(...BREAKS),
  fc.constantFrom(...PAYLOADS),
  fc.constantFrom(...TRICKY),
  fc.string({ maxLength: 8 }),
);
const injected = fc.array(piece, { minLength: 1, maxLength: 6 }).map((parts) => parts.join(""));
/** No line break, but every character that has a meaning in an address header. */
const tricky = fc
  .array(fc.oneof(fc.constantFrom(...TRICKY), fc.string({ maxLength: 6 })), { minLength: 1, maxLength: 6 })
  .map((parts) => parts.join(""));
const headerField = fc.oneof({ arbitrary: injected, weight: 1 }, { arbitrary: tricky, weight: 2 });
const email = fc.oneof(
  fc.constantFrom("ada@example.com", "o'brien@example.co.uk", "first.last+tag@example.org"),
  fc.tuple(fc.constantFrom("ada@example.com", "x@example.com"), injected).map(([a, b]) => a + b),
  fc.tuple(injected, fc.constantFrom("@example.com")).map(([a, b]) => a + b),
);

const HEADER_NAME = /^([!-9;-~]+):/;

describe("header injection (fuzzed, fixed seed)", () => {
  let h: ContactHarness;
  beforeAll(async () => {
    h = await contactHarness({ CONTACT_DAILY_CAP: "10000000" });
  });
  afterAll(() => h.close());

  it("CR/LF/Unicode line breaks in name, email or subject never add a header or a recipient", async () => {
    let accepted = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({ name: headerField, email, subject: fc.option(headerField, { nil: undefined }) }),
        async ({ name, email, subject }) => {
          const res = await h.post({ name, email, ...(subject !== undefined && { subject }), message: "fuzz body" });
          if (res.status === 400) {
            refused++;
            expect((await errorOf(res)).error.code).toBe("invalid_body");
            return;
          }
          expect(res.status).toBe(200);
          accepted++;
          const { id } = (await res.json()) as { id: string };
          const m = await h.smtp.waitForMessage((x) => x.text.includes(id));
          expect(m.rcptTo).toEqual([DESK]);
          expect(m.to).toEqual([DESK]);
          expect(m.replyTo).toBe(email);
          // The display name and the subject arrive as written, also one that looks like an RFC 2047
          // encoded-word (a reader decoding it would show text the desk never validated).
          expect(m.replyToName?.trim()).toBe(name.trim());
          expect(m.subject.trim()).toBe(`[Contact] ${subject ?? `Message from ${name}`}`.trim());
          const names = m.headers.map((l) => HEADER_NAME.exec(l)?.[1]?.toLowerCase());
          expect(names).not.toContain("bcc");
          expect(names).not.toContain("cc");
          expect(names).not.toContain("x-injected");
          for (const one of ["to", "from", "reply-to", "subject", "content-type"]) {
            expect(names.filter((n) => n === one)).toHaveLength(1);
          }
          // Every header line is a real header: nothing spliced in as a line of its own.
          expect(m.headers.every((l) => HEADER_NAME.test(l))).toBe(true);
        },
      ),
      { seed: 20_240_501, numRuns: propertyRuns(300) },
    );
    // The property saw both outcomes: refusals and messages that really went through.
    expect(refused).toBeGreaterThan(0);
    expect(accepted).toBeGreaterThan(0);
  });
});
