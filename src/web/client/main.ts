import { ApiError, StreetflowApi, type Account, type NetworkInfo, type SessionInfo } from "./api.js";
import { errorReporter, EventBus, type AppContext } from "./context.js";
import { StreetMap } from "./map.js";
import { initialNetwork } from "./networks.js";
import { byId, messageOf, setStatus } from "./ui.js";
import { analysesView } from "./views/analyses.js";
import { countsView } from "./views/counts.js";
import { setUpNetwork } from "./views/network.js";
import { setUpTabs } from "./views/tabs.js";
import { zoneSetsView } from "./views/zone-sets.js";

/** sessionStorage only: the key is gone when the tab closes and is never written to disk by the page. */
const KEY_STORAGE = "streetflow.apiKey";
const EMAIL_STORAGE = "streetflow.email";

const ui = {
  signinView: byId<HTMLElement>("signin-view"),
  signinForm: byId<HTMLFormElement>("signin-form"),
  keyInput: byId<HTMLInputElement>("api-key"),
  emailInput: byId<HTMLInputElement>("user-email"),
  passwordInput: byId<HTMLInputElement>("password"),
  resetForm: byId<HTMLFormElement>("reset-form"),
  newPassword: byId<HTMLInputElement>("new-password"),
  resetStatus: byId<HTMLElement>("reset-status"),
  adminLink: byId<HTMLAnchorElement>("admin-link"),
  accountName: byId<HTMLElement>("account-name"),
  signinButton: byId<HTMLButtonElement>("signin-button"),
  signinError: byId<HTMLElement>("signin-error"),
  appView: byId<HTMLElement>("app-view"),
  signOut: byId<HTMLButtonElement>("sign-out"),
  sidebarToggle: byId<HTMLButtonElement>("sidebar-toggle"),
};

/** A sign-in refused for a reason the user can fix (shown as is). */
class SignInRefused extends Error {}

/** The API of the signed-in page, for sign-out. */
let currentApi: StreetflowApi | null = null;

async function signInWithPassword(email: string, password: string): Promise<void> {
  ui.signinButton.disabled = true;
  setStatus(ui.signinError, "Signing in…", "loading");
  try {
    const { api, session } = await StreetflowApi.signIn(email, password);
    await startSession(api, session);
    ui.passwordInput.value = "";
    setStatus(ui.signinError, "");
  } catch (err) {
    const text =
      err instanceof ApiError && err.status === 401
        ? "The e-mail or password is wrong."
        : err instanceof ApiError
          ? err.message
          : `Sign-in failed: ${messageOf(err)}`;
    setStatus(ui.signinError, text, "error");
    ui.passwordInput.focus();
  } finally {
    ui.signinButton.disabled = false;
  }
}

async function startSession(api: StreetflowApi, session: SessionInfo): Promise<void> {
  const [account, networks] = await Promise.all([api.account(), api.listNetworks()]);
  ui.adminLink.hidden = session.user.role !== "admin";
  startApp(api, account, session.user.email, networks);
}

async function signIn(key: string, email: string): Promise<void> {
  const api = new StreetflowApi({ key });
  ui.signinButton.disabled = true;
  setStatus(ui.signinError, "Signing in…", "loading");
  try {
    const [account, networks] = await Promise.all([api.account(), api.listNetworks()]);
    const userEmail = chooseUser(account, email);
    sessionStorage.setItem(KEY_STORAGE, key);
    if (email) sessionStorage.setItem(EMAIL_STORAGE, email);
    setStatus(ui.signinError, "");
    startApp(api, account, userEmail, networks);
  } catch (err) {
    sessionStorage.removeItem(KEY_STORAGE);
    sessionStorage.removeItem(EMAIL_STORAGE);
    const text =
      err instanceof ApiError && err.status === 401
        ? "This API key is not valid."
        : err instanceof SignInRefused
          ? err.message
          : `Sign-in failed: ${messageOf(err)}`;
    setStatus(ui.signinError, text, "error");
    (err instanceof SignInRefused ? ui.emailInput : ui.keyInput).focus();
  } finally {
    ui.signinButton.disabled = false;
  }
}

/** The entered e-mail must be a user of the key's organization; without one, the only user if there is one. */
function chooseUser(account: Account, email: string): string | undefined {
  const users = account.users.map((u) => u.email);
  if (!email) return users.length === 1 ? users[0] : undefined;
  const match = users.find((u) => u.toLowerCase() === email.toLowerCase());
  if (!match) throw new SignInRefused(`${email} is not a user of ${account.organization.name}.`);
  return match;
}

async function signOut(): Promise<void> {
  sessionStorage.removeItem(KEY_STORAGE);
  sessionStorage.removeItem(EMAIL_STORAGE);
  if (currentApi?.usesSession) await currentApi.signOut().catch(() => undefined);
  // A fresh page drops the map, its layers and the poll timers in one go.
  location.reload();
}

function startApp(
  api: StreetflowApi,
  account: Account,
  userEmail: string | undefined,
  networks: NetworkInfo[],
): void {
  currentApi = api;
  ui.signinView.hidden = true;
  ui.accountName.hidden = false;
  ui.accountName.textContent = userEmail
    ? `${account.organization.name} · ${userEmail}`
    : account.organization.name;
  ui.appView.hidden = false;
  ui.signOut.hidden = false;
  ui.sidebarToggle.hidden = false;
  let current = initialNetwork(networks);
  const ctx: AppContext = {
    api,
    account,
    userEmail,
    map: new StreetMap(byId("map")),
    networks,
    currentNetwork: () => current,
    events: new EventBus(),
    showError: errorReporter(() => void signOut()),
  };
  void setUpNetwork(ctx, (network) => {
    current = network;
    ctx.events.emit("network-changed", network);
  });
  setUpTabs(byId("view-tabs"), [zoneSetsView(ctx), analysesView(ctx), countsView(ctx)]);
}

function setUpSidebarToggle(): void {
  const narrow = window.matchMedia("(max-width: 800px)");
  const setOpen = (open: boolean) => {
    document.body.classList.toggle("sidebar-closed", !open);
    ui.sidebarToggle.setAttribute("aria-expanded", String(open));
  };
  setOpen(!narrow.matches);
  narrow.addEventListener("change", () => setOpen(!narrow.matches));
  ui.sidebarToggle.addEventListener("click", () =>
    setOpen(document.body.classList.contains("sidebar-closed")),
  );
}

ui.signinForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const key = ui.keyInput.value.trim();
  const email = ui.emailInput.value.trim();
  if (key !== "") return void signIn(key, email);
  if (email === "" || ui.passwordInput.value === "") {
    setStatus(ui.signinError, "Enter your e-mail and password, or an API key.", "error");
    (email === "" ? ui.emailInput : ui.passwordInput).focus();
    return;
  }
  void signInWithPassword(email, ui.passwordInput.value);
});
ui.signOut.addEventListener("click", () => void signOut());
setUpSidebarToggle();

/** `/#reset=TOKEN`: an admin's one-time link (the token stays in the fragment, never sent in a request line). */
function setUpPasswordReset(token: string): void {
  ui.signinForm.hidden = true;
  ui.resetForm.hidden = false;
  ui.newPassword.focus();
  ui.resetForm.addEventListener("submit", (event) => {
    event.preventDefault();
    setStatus(ui.resetStatus, "Saving…", "loading");
    StreetflowApi.resetPassword(token, ui.newPassword.value).then(
      (email) => {
        history.replaceState(null, "", location.pathname);
        ui.resetForm.hidden = true;
        ui.signinForm.hidden = false;
        ui.emailInput.value = email;
        setStatus(ui.signinError, "Your password is set: sign in with it.");
        ui.passwordInput.focus();
      },
      (err: unknown) => setStatus(ui.resetStatus, messageOf(err), "error"),
    );
  });
}

async function resume(): Promise<void> {
  const reset = /^#reset=([\w-]+)$/.exec(location.hash);
  if (reset) return setUpPasswordReset(reset[1]);
  const savedKey = sessionStorage.getItem(KEY_STORAGE);
  if (savedKey) return signIn(savedKey, sessionStorage.getItem(EMAIL_STORAGE) ?? "");
  const existing = await StreetflowApi.fromSession().catch(() => null);
  if (existing) return startSession(existing.api, existing.session);
  ui.emailInput.focus();
}
void resume();
