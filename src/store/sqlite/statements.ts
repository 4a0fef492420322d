import type Database from "better-sqlite3";

/**
 * Prepares each SQL text once per connection and hands out the same statement afterwards:
 * preparing costs more than running a small query, and request paths run the same few.
 * Prepared on first use, so a connection to an older file opens without the newer tables.
 */
export function statementCache(db: Database.Database): (sql: string) => Database.Statement {
  const cache = new Map<string, Database.Statement>();
  return (sql) => {
    let statement = cache.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      cache.set(sql, statement);
    }
    return statement;
  };
}
