import { sql } from "kysely";
import type { Database } from "../../db/database.js";

/**
 * The account (better-auth's user) that signed in with `email`, or null: none did, or better-auth's
 * tables do not exist yet (no one has signed in on this database).
 */
export async function accountIdByEmail(database: Pick<Database, "db">, email: string): Promise<string | null> {
  try {
    const { rows } = await sql<{
      id: string;
    }>`select id from auth_user where lower(email) = ${email.toLowerCase()}`.execute(database.db);
    return rows[0]?.id ?? null;
  } catch {
    return null;
  }
}
