import { ApiError, StreetflowApi, type NetworkInfo } from "./api.js";
import { errorReporter, EventBus, type AppContext } from "./context.js";
import { StreetMap } from "./map.js";
import { byId, messageOf, setStatus } from "./ui.js";
import { analysesView } from "./views/analyses.js";
import { countsView } from "./views/counts.js";
import { setUpNetwork } from "./views/network.js";
import { setUpTabs } from "./views/tabs.js";
import { zoneSetsView } from "./views/zone-sets.js";

/** sessionStorage only: the key is gone when the tab closes and is never written to disk by the page. */
const KEY_STORAGE = "streetflow.apiKey";

const ui = {
  signinView: byId<HTMLElement>("signin-view"),
  signinForm: byId<HTMLFormElement>("signin-form"),
  keyInput: byId<HTMLInputElement>("api-key"),
  signinButton: byId<HTMLButtonElement>("signin-button"),
  signinError: byId<HTMLElement>("signin-error"),
  appView: byId<HTMLElement>("app-view"),
  signOut: byId<HTMLButtonElement>("sign-out"),
  sidebarToggle: byId<HTMLButtonElement>("sidebar-toggle"),
};

async function signIn(key: string): Promise<void> {
  const api = new StreetflowApi(key);
  ui.signinButton.disabled = true;
  setStatus(ui.signinError, "Signing in…", "loading");
  try {
    const networks = await api.listNetworks();
    sessionStorage.setItem(KEY_STORAGE, key);
    setStatus(ui.signinError, "");
    startApp(api, networks);
  } catch (err) {
    sessionStorage.removeItem(KEY_STORAGE);
    const text =
      err instanceof ApiError && err.status === 401
        ? "This API key is not valid."
        : `Sign-in failed: ${messageOf(err)}`;
    setStatus(ui.signinError, text, "error");
    ui.keyInput.focus();
  } finally {
    ui.signinButton.disabled = false;
  }
}

function signOut(): void {
  sessionStorage.removeItem(KEY_STORAGE);
  // A fresh page drops the map, its layers and the poll timers in one go.
  location.reload();
}

function startApp(api: StreetflowApi, networks: NetworkInfo[]): void {
  ui.signinView.hidden = true;
  ui.appView.hidden = false;
  ui.signOut.hidden = false;
  ui.sidebarToggle.hidden = false;
  let current = networks[0];
  const ctx: AppContext = {
    api,
    map: new StreetMap(byId("map")),
    networks,
    currentNetwork: () => current,
    events: new EventBus(),
    showError: errorReporter(signOut),
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
  if (key === "") {
    setStatus(ui.signinError, "Enter your API key.", "error");
    ui.keyInput.focus();
    return;
  }
  void signIn(key);
});
ui.signOut.addEventListener("click", signOut);
setUpSidebarToggle();

const savedKey = sessionStorage.getItem(KEY_STORAGE);
if (savedKey) void signIn(savedKey);
else ui.keyInput.focus();
