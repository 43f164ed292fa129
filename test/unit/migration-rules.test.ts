import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// An upgrade applies the D1 migrations before it deploys (README, "Deploying to Cloudflare"), and a gradual deployment
// keeps the previous version serving part of the requests: the code of the revision before a migration runs over the
// schema it leaves. So a migration only adds (tables, nullable columns or columns with a default, indexes) or widens;
// the statements below take away or change what that code reads and writes, and are refused unless the file is
// grandfathered here or the statement is preceded, on the line just before it, by `-- breaks-previous-code: <why it is
// safe>` (docs/reliability.md, "Upgrades over live state").

/** Where the migrations are, from the project's root (vitest runs there). */
const MIGRATIONS_DIR = "migrations";

/** The comment that lets one refused statement through; its reason must say why the code before still works. */
const MARKER = /^--\s*breaks-previous-code:\s*\S/;

/**
 * Files written before this rule, each with why the code of the revision before them kept working (the audit of
 * 0001–0037): both rebuild `metadata_tags` to widen its CHECK, the only way SQLite changes one, under the same name
 * with the same columns, primary key and index, so every statement of the code before reads and writes as before.
 */
const GRANDFATHERED: Readonly<Record<string, string>> = {
  "0025_secret_tags.sql": "rebuilds metadata_tags with the CHECK widened ('SECRET'): same name, columns, key and index",
  "0028_environment_tags.sql": "rebuilds metadata_tags with the CHECK widened ('ENV_VARIABLE'): same name, columns, key and index",
};

/** One SQL statement of a migration file: its text without comments, and the line its text begins on. */
interface Statement {
  readonly sql: string;
  readonly line: number;
}

/** Splits a migration file into statements at the `;` outside strings and comments, dropping the comments. */
function statementsOf(text: string): Statement[] {
  const statements: Statement[] = [];
  let sql = "";
  let line = 1;
  let startLine = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "-" && text[i + 1] === "-") {
      while (i < text.length && text[i] !== "\n") i++;
      i--;
      continue;
    }
    if (c === "\n") line++;
    if (c === "'" || c === '"' || c === "`") {
      if (startLine === 0) startLine = line;
      let j = i + 1;
      // A quote inside is doubled ('It''s'): the scan goes on past it.
      while (j < text.length && !(text[j] === c && text[j + 1] !== c)) j += text[j] === c ? 2 : 1;
      const literal = text.slice(i, j + 1);
      line += literal.split("\n").length - 1;
      sql += literal;
      i = j;
      continue;
    }
    if (c === ";") {
      if (sql.trim() !== "") statements.push({ sql: sql.replace(/\s+/g, " ").trim(), line: startLine });
      sql = "";
      startLine = 0;
      continue;
    }
    if (startLine === 0 && !/\s/.test(c)) startLine = line;
    sql += c;
  }
  if (sql.trim() !== "") statements.push({ sql: sql.replace(/\s+/g, " ").trim(), line: startLine });
  return statements;
}

/** Names of the unique indexes the statements create (CREATE UNIQUE INDEX), lower-cased. */
function uniqueIndexesOf(statements: readonly Statement[]): string[] {
  return statements.flatMap(({ sql }) => {
    const match = /^CREATE UNIQUE INDEX (?:IF NOT EXISTS )?["`]?(\w+)/i.exec(sql);
    return match ? [match[1]!.toLowerCase()] : [];
  });
}

/**
 * Why the statement breaks the code of the revision before it, or undefined when it does not: it drops or renames a
 * table or column that code may use, drops a unique index its INSERT ... ON CONFLICT may target, or adds a NOT NULL
 * column without a default, which its INSERTs leave out.
 */
function breakage(sql: string, uniqueIndexes: ReadonlySet<string>): string | undefined {
  const s = sql.toUpperCase();
  if (/^DROP TABLE\b/.test(s)) return "DROP TABLE";
  if (/^ALTER TABLE \S+ DROP\b/.test(s)) return "DROP COLUMN";
  if (/^ALTER TABLE \S+ RENAME\b/.test(s)) return "RENAME";
  const dropIndex = /^DROP INDEX (?:IF EXISTS )?["`]?(\w+)/.exec(s);
  if (dropIndex && uniqueIndexes.has(dropIndex[1]!.toLowerCase())) return "DROP INDEX of a unique index";
  const added = /^ALTER TABLE \S+ ADD (?:COLUMN )?(.*)$/.exec(s);
  if (added && /\bNOT NULL\b/.test(added[1]!) && !/\bDEFAULT\b/.test(added[1]!)) return "ADD COLUMN ... NOT NULL without DEFAULT";
  return undefined;
}

/** Whether the line just before the statement's first line is the marker comment with a reason. */
function marked(lines: readonly string[], statement: Statement): boolean {
  return MARKER.test((lines[statement.line - 2] ?? "").trim());
}

/**
 * The refused statements of migration files (name and text, in the order D1 applies them), as
 * "file:line: what (statement)"; the unique indexes a file drops are those the files before it created.
 */
function refusals(files: ReadonlyArray<{ name: string; text: string }>, grandfathered: Readonly<Record<string, string>> = GRANDFATHERED): string[] {
  const uniqueIndexes = new Set<string>();
  const found: string[] = [];
  for (const { name, text } of files) {
    const statements = statementsOf(text);
    const lines = text.split("\n");
    if (!(name in grandfathered)) {
      for (const statement of statements) {
        const what = breakage(statement.sql, uniqueIndexes);
        if (what !== undefined && !marked(lines, statement)) found.push(`${name}:${statement.line}: ${what} (${statement.sql.slice(0, 80)})`);
      }
    }
    for (const index of uniqueIndexesOf(statements)) uniqueIndexes.add(index);
  }
  return found;
}

/** The project's migration files, in the order D1 applies them. */
function migrationFiles(): Array<{ name: string; text: string }> {
  return readdirSync(MIGRATIONS_DIR)
    .filter((name) => name.endsWith(".sql"))
    .sort()
    .map((name) => ({ name, text: readFileSync(join(MIGRATIONS_DIR, name), "utf8") }));
}

describe("migrations keep the code of the revision before them working", () => {
  it("no migration drops, renames or adds a NOT NULL column without a default, unless grandfathered or marked", () => {
    const files = migrationFiles();
    expect(files.length).toBeGreaterThan(30);
    expect(refusals(files)).toEqual([]);
  });

  it("every grandfathered file exists and still holds what it was let through for", () => {
    const files = migrationFiles();
    for (const name of Object.keys(GRANDFATHERED)) {
      const file = files.find((f) => f.name === name);
      expect(file, name).toBeDefined();
      expect(refusals([file!], {}).length, name).toBeGreaterThan(0);
    }
  });

  it("refuses a table dropped and created again in a new shape (0037 as first written)", () => {
    const sql = [
      "-- One row per delivery.",
      "DROP TABLE webhook_deliveries;",
      "CREATE TABLE webhook_deliveries (webhook_id TEXT NOT NULL, digest TEXT NOT NULL, seed TEXT NOT NULL, PRIMARY KEY (webhook_id, digest));",
    ].join("\n");
    expect(refusals([{ name: "9999_x.sql", text: sql }])).toEqual([
      "9999_x.sql:2: DROP TABLE (DROP TABLE webhook_deliveries)",
    ]);
  });

  it("refuses columns dropped, renames, unique indexes dropped and NOT NULL columns without a default", () => {
    const files = [
      { name: "0001_a.sql", text: "CREATE TABLE t (a TEXT, b TEXT);\nCREATE UNIQUE INDEX t_by_a ON t (a);\nCREATE INDEX t_by_b ON t (b);" },
      {
        name: "0002_b.sql",
        text: [
          "ALTER TABLE t DROP COLUMN b;",
          "alter table t rename column a to c;",
          "ALTER TABLE t RENAME TO u;",
          "DROP INDEX t_by_a;",
          "DROP INDEX t_by_b;",
          "ALTER TABLE t ADD COLUMN d INTEGER NOT NULL;",
          "ALTER TABLE t ADD COLUMN e INTEGER NOT NULL DEFAULT 0;",
          "ALTER TABLE t ADD COLUMN f TEXT;",
          "INSERT INTO t (a) VALUES ('DROP TABLE t; it''s text');",
        ].join("\n"),
      },
    ];
    expect(refusals(files).map((line) => line.replace(/ \(.*$/, ""))).toEqual([
      "0002_b.sql:1: DROP COLUMN",
      "0002_b.sql:2: RENAME",
      "0002_b.sql:3: RENAME",
      "0002_b.sql:4: DROP INDEX of a unique index",
      "0002_b.sql:6: ADD COLUMN ... NOT NULL without DEFAULT",
    ]);
  });

  it("lets a statement through with the marker comment and its reason on the line before", () => {
    const marked = "-- breaks-previous-code: no revision still serving reads it (dropped two releases after its last use)\nDROP TABLE old_rows;";
    const bare = "-- breaks-previous-code:\nDROP TABLE old_rows;";
    const apart = "-- breaks-previous-code: a reason\n\nDROP TABLE old_rows;";
    expect(refusals([{ name: "0001_a.sql", text: marked }])).toEqual([]);
    expect(refusals([{ name: "0001_a.sql", text: bare }])).toHaveLength(1);
    expect(refusals([{ name: "0001_a.sql", text: apart }])).toHaveLength(1);
  });
});
