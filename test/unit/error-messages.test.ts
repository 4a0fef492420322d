import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { braceless } from "../../src/api/errors.js";

const SRC = new URL("../../src/", import.meta.url).pathname;
/** Calls whose string arguments become an error message a client sees. */
const MESSAGE_CALLS = new Set(["badRequest", "notFound", "conflict", "forbidden", "unauthorized", "Error"]);

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && path !== join(SRC, "web")) yield* sourceFiles(path);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) yield path;
  }
}

/** The literal text of a string or template (interpolations left out: they are values, not the catalogue). */
function literalText(node: ts.Node): string | null {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node))
    return node.head.text + node.templateSpans.map((s) => s.literal.text).join("");
  return null;
}

/** Every message text of the error catalogue: error builders' arguments and `message:` properties. */
function catalogue(): { where: string; text: string }[] {
  const found: { where: string; text: string }[] = [];
  for (const file of sourceFiles(SRC)) {
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const add = (node: ts.Node) => {
      const text = literalText(node);
      if (text !== null) {
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        found.push({ where: `${relative(SRC, file)}:${line}`, text });
      }
    };
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const callee = node.expression;
        const name = ts.isIdentifier(callee) ? callee.text : null;
        if (name && MESSAGE_CALLS.has(name)) node.arguments?.forEach(add);
      }
      if (ts.isPropertyAssignment(node) && node.name.getText(source) === "message") add(node.initializer);
      if (ts.isConditionalExpression(node) && ts.isPropertyAssignment(node.parent)) {
        add(node.whenTrue);
        add(node.whenFalse);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe("error messages", () => {
  it("carry no brace anywhere in the catalogue (clients format messages as templates)", () => {
    const messages = catalogue();
    assert.ok(messages.length > 100, `the scan found the catalogue: ${messages.length} messages`);
    const withBraces = messages.filter((m) => /[{}]/.test(m.text));
    assert.deepEqual(withBraces, []);
  });

  it("turn a brace a user value brings in into a parenthesis", () => {
    assert.equal(braceless('no zone set "{x}"'), 'no zone set "(x)"');
  });
});
