import { createRequire } from "node:module";
import type { Page } from "playwright-core";

const AXE = (createRequire(import.meta.url)("axe-core") as { source: string }).source;

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core (WCAG 2 A/AA rules, incl. 4.5:1 colour contrast) on the page as it is now: one line per
 * serious or critical rule, naming its nodes. The page's context needs `bypassCSP` to take the script.
 */
export async function seriousViolations(page: Page, exclude: string[] = []): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ content: AXE });
  const violations = (await page.evaluate(
    async (ex) =>
      (
        await (
          window as unknown as { axe: { run: (ctx: unknown, o: unknown) => Promise<{ violations: Violation[] }> } }
        ).axe.run(
          { exclude: ex.map((s) => [s]) },
          { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } },
        )
      ).violations,
    exclude,
  )) as Violation[];
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map(
      (v) =>
        `${v.id} (${v.impact}, ${v.nodes.length} nodes): ${v.help} at ${v.nodes
          .slice(0, 5)
          .map((n) => n.target.join(" "))
          .join(", ")}`,
    );
}
