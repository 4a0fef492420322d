import type { Command } from "commander";
import { assertEmail, issueApiKey, requireOrganization } from "../domain/accounts.js";
import { notFound } from "../domain/errors.js";
import { withRuntime } from "./runtime.js";

export function accountCommands(program: Command): void {
  const org = program.command("org").description("organizations");
  org
    .command("create <name>")
    .description("create an organization")
    .action((name: string) =>
      withRuntime(program, ({ store }) => {
        const o = store.accounts.createOrganization(name);
        console.log(`organization ${o.name} ${o.id}`);
      }),
    );
  org.command("list").action(() =>
    withRuntime(program, ({ store }) => {
      for (const o of store.accounts.listOrganizations()) console.log(`${o.id}  ${o.name}`);
    }),
  );

  const user = program.command("user").description("users (login e-mails)");
  user
    .command("add <email>")
    .description("add a user to an organization")
    .requiredOption("--org <org>", "organization name or id")
    .action((email: string, opts: { org: string }) =>
      withRuntime(program, ({ store }) => {
        assertEmail(email, "email");
        const o = requireOrganization(store, opts.org);
        store.accounts.addUser(email, o.id);
        console.log(`user ${email} added to ${o.name}`);
      }),
    );

  const key = program.command("key").description("API keys");
  key
    .command("create")
    .description("create an API key; it is printed once and stored only as a hash")
    .requiredOption("--org <org>", "organization name or id")
    .option("--label <label>", "what the key is for")
    .action((opts: { org: string; label?: string }) =>
      withRuntime(program, ({ store }) => {
        const o = requireOrganization(store, opts.org);
        const issued = issueApiKey(store, o.id, opts.label ?? null);
        console.error(`key ${issued.record.id} for ${o.name} (shown once, keep it safe):`);
        console.log(issued.key);
      }),
    );
  key
    .command("revoke <idOrPrefix>")
    .description("revoke an API key by id or prefix")
    .action((idOrPrefix: string) =>
      withRuntime(program, ({ store }) => {
        const rec = store.accounts.revokeKey(idOrPrefix);
        if (!rec) throw notFound("unknown_key", `no API key "${idOrPrefix}"`);
        console.log(`revoked ${rec.id} (${rec.prefix}…)`);
      }),
    );
  key
    .command("list")
    .requiredOption("--org <org>", "organization name or id")
    .action((opts: { org: string }) =>
      withRuntime(program, ({ store }) => {
        const o = requireOrganization(store, opts.org);
        for (const k of store.accounts.listKeys(o.id))
          console.log(`${k.id}  ${k.prefix}…  ${k.revokedAt ? "revoked" : "active"}  ${k.label ?? ""}`);
      }),
    );
}
