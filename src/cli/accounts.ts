import { mapErrors } from "../app/error-mapping.js";
import type { Command } from "commander";
import { assertEmail, issueApiKey, requireOrganization } from "../app/accounts.js";
import { fail } from "../domain/errors.js";
import { generatePassword } from "../domain/security/passwords.js";
import { isRole, type Role } from "../domain/security/principal.js";
import { setPassword } from "../app/security/sessions.js";
import { withContext } from "./context.js";

export function accountCommands(program: Command): void {
  const org = program.command("org").description("organizations");
  org
    .command("create <name>")
    .description("create an organization")
    .action((name: string) =>
      withContext(program, async ({ store }) => {
        const o = await mapErrors(async () => await store.accounts.createOrganization(name));
        console.log(`organization ${o.name} ${o.id}`);
      }),
    );
  org.command("list").action(() =>
    withContext(program, async ({ store }) => {
      for (const o of await store.accounts.listOrganizations()) console.log(`${o.id}  ${o.name}`);
    }),
  );

  const user = program.command("user").description("users (login e-mails)");
  user
    .command("add <email>")
    .description("add a user to an organization")
    .requiredOption("--org <org>", "organization name or id")
    .option("--role <role>", "admin, analyst or viewer", "analyst")
    .action((email: string, opts: { org: string; role: string }) =>
      withContext(program, async ({ store }) => {
        assertEmail(email, "email");
        if (!isRole(opts.role)) throw fail("invalid_role", undefined, "role");
        const o = await requireOrganization(store, opts.org);
        await store.accounts.addUser(email, o.id, opts.role as Role);
        console.log(`user ${email} added to ${o.name} as ${opts.role}`);
      }),
    );
  user
    .command("password <email>")
    .description(
      "set a user's password, read from standard input (first line) or generated and printed; ends the user's sessions",
    )
    .option("--generate", "generate a password and print it (the default on a terminal)")
    .action((email: string, opts: { generate?: boolean }) =>
      withContext(program, async ({ store }) => {
        // A typed password would echo on the terminal: there, one is generated instead.
        const piped = !opts.generate && !process.stdin.isTTY;
        const password = piped ? (await readStdin()).split(/\r?\n/)[0] : generatePassword();
        await setPassword(store, email, password);
        console.error(`password of ${email} set`);
        if (!piped) console.log(password);
      }),
    );

  const key = program.command("key").description("API keys");
  key
    .command("create")
    .description("create an API key; it is printed once and stored only as a hash")
    .requiredOption("--org <org>", "organization name or id")
    .option("--label <label>", "what the key is for")
    .action((opts: { org: string; label?: string }) =>
      withContext(program, async ({ store }) => {
        const o = await requireOrganization(store, opts.org);
        const issued = await issueApiKey(store, o.id, opts.label ?? null);
        console.error(`key ${issued.record.id} for ${o.name} (shown once, keep it safe):`);
        console.log(issued.key);
      }),
    );
  key
    .command("revoke <idOrPrefix>")
    .description("revoke an API key by id or prefix")
    .action((idOrPrefix: string) =>
      withContext(program, async ({ store }) => {
        const rec = await store.accounts.revokeKey(idOrPrefix);
        if (!rec) throw fail("unknown_key", { key: idOrPrefix });
        console.log(`revoked ${rec.id} (${rec.prefix}…)`);
      }),
    );
  key
    .command("list")
    .requiredOption("--org <org>", "organization name or id")
    .action((opts: { org: string }) =>
      withContext(program, async ({ store }) => {
        const o = await requireOrganization(store, opts.org);
        for (const k of await store.accounts.listKeys(o.id))
          console.log(`${k.id}  ${k.prefix}…  ${k.revokedAt ? "revoked" : "active"}  ${k.label ?? ""}`);
      }),
    );
}

async function readStdin(): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return text;
}
