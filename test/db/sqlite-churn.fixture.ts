// Leaves thousands of prepared statements to the garbage collector while the event loop idles,
// the way a server does between requests. better-sqlite3 12 on Node 24.19+ aborts here within
// a second (`Assertion failed: (env) != nullptr` in Statement::~Statement); 13 on Node 20 crashes
// at the first query. Run by sqlite-driver.test.ts in a child process; prints one JSON line.
import { openSqliteFile, sqliteDriverLabel } from "../../src/db/sqlite.js";

const db = openSqliteFile(":memory:");
let sum = 0;
for (let round = 0; round < 20; round++) {
  for (let i = 0; i < 1000; i++) {
    sum += (db.prepare(`select ? + ${i % 50} as n`).get(i) as { n: number }).n;
  }
  const garbage = Array.from({ length: 20_000 }, (_, i) => ({ i, s: `x${i}` }));
  sum += garbage.length;
  await new Promise((resolve) => setTimeout(resolve, 5));
}
db.close();
console.log(JSON.stringify({ node: process.version, driver: sqliteDriverLabel(), sum }));
