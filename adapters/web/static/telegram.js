/* Telegram's Mini App bridge, without Telegram's script: the page tells the client what it wants
   (ready, expand, the BackButton, haptics) and hears its events (the BackButton pressed, a new
   theme), through the client's documented channels (core.telegram.org/api/web-events):
   TelegramWebviewProxy.postEvent in the apps, window.external.notify, or postMessage to the parent
   frame of Telegram Web.  Outside Telegram every call does nothing. */
"use strict";
const MiniApp = (() => {
  const handlers = {};
  const hash = new URLSearchParams(location.hash.slice(1));
  const inside = Boolean(hash.get("tgWebAppData") || window.TelegramWebviewProxy ||
                         (window.parent !== window && hash.get("tgWebAppVersion")));
  function post(type, data) {
    if (!inside) return false;
    try {
      if (window.TelegramWebviewProxy && window.TelegramWebviewProxy.postEvent) {
        window.TelegramWebviewProxy.postEvent(type, JSON.stringify(data || {}));
      } else if (window.external && "notify" in window.external) {
        window.external.notify(JSON.stringify({eventType: type, eventData: data || {}}));
      } else if (window.parent !== window) {
        window.parent.postMessage(JSON.stringify({eventType: type, eventData: data || {}}), "https://web.telegram.org");
      }
      return true;
    } catch (e) { return false; }
  }
  function receive(type, data) { (handlers[type] || []).forEach((f) => f(data)); }
  // The apps call window.Telegram.WebView.receiveEvent; Telegram Web posts a message.
  window.Telegram = window.Telegram || {};
  window.Telegram.WebView = window.Telegram.WebView || {};
  window.Telegram.WebView.receiveEvent = receive;
  window.addEventListener("message", (e) => {
    try { const m = JSON.parse(e.data); if (m && m.eventType) receive(m.eventType, m.eventData); } catch (x) { /* not ours */ }
  });
  let back = false;
  return {
    inside,
    theme: () => { try { return JSON.parse(hash.get("tgWebAppThemeParams") || "{}"); } catch (e) { return {}; } },
    initData: () => hash.get("tgWebAppData"),
    on: (type, f) => { (handlers[type] = handlers[type] || []).push(f); },
    ready: () => { post("web_app_ready"); post("web_app_expand"); },
    backButton: (visible) => { if (visible !== back) { back = visible; post("web_app_setup_back_button", {is_visible: visible}); } },
    haptic: (kind) => post("web_app_trigger_haptic_feedback", kind === "turn" ?
      {type: "impact", impact_style: "medium"} : {type: "notification", notification_type: kind}),
  };
})();
