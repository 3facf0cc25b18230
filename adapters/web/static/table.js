/* The web table: draws what the service sent this viewer (never works out a rule), sends the action
   tokens of the buttons pressed, and follows the table over Server-Sent Events. */
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const RANKS = [1, 2, 3, 4, 5, 6, 7, 10, 11, 12];
  const SUITS = ["o", "c", "e", "b"];
  const S = {k: null, table: null, spectator: true, room: null, hand: null, i18n: null, seen: new Set(),
             lastMove: null, busy: false, sentAt: null, shownAt: {}, drawn: -1, painting: false, dirty: false};
  window.cinq = S; // for the tests and the benchmark: the state the page draws from
  const tr = (key, p) => {
    let s = (S.i18n && S.i18n.t[key]) || key;
    for (const [k, v] of Object.entries(p || {})) s = s.split(`{${k}}`).join(String(v));
    return s;
  };
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})[c]);
  const cardName = (code) => (S.i18n && S.i18n.cards[code]) || code;
  // Wall-clock milliseconds comparable between pages (the benchmark times a click in one page to the
  // table drawn in another).
  const clock = () => performance.timeOrigin + performance.now();

  function theme() {
    // A Mini App gets Telegram's colours in the URL fragment (tgWebAppThemeParams).
    const h = new URLSearchParams(location.hash.slice(1));
    try {
      const t = JSON.parse(h.get("tgWebAppThemeParams") || "{}");
      const map = {bg_color: "--bg", text_color: "--fg", button_color: "--accent", button_text_color: "--accent-fg",
                   secondary_bg_color: "--panel"};
      for (const [k, v] of Object.entries(map)) if (t[k]) document.documentElement.style.setProperty(v, t[k]);
    } catch (e) { /* no theme: the page's own colours */ }
    return h.get("tgWebAppData");
  }

  function linkClaims(k) {
    // What a link says (not secret, only signed): {p, u, t, e}; null if it is not one.
    try { return JSON.parse(atob(k.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))); } catch (e) { return null; }
  }
  async function credentials() {
    const q = new URLSearchParams(location.search);
    const k = q.get("k");
    const initData = theme();
    // A person's link is theirs; a spectator's link opened as a Mini App (a private chat's table
    // button) is traded with Telegram's initData for the person's own view of that table.
    const claims = k ? linkClaims(k) : null;
    if (k && (!initData || !claims || claims.p)) return k;
    if (!initData) return null;
    const r = await fetch("/api/session", {method: "POST", headers: {"content-type": "application/json"},
      body: JSON.stringify({init_data: initData, table: q.get("table") || (claims && claims.t)})});
    if (!r.ok) { await refused(r); return null; }
    return (await r.json()).k;
  }

  async function loadI18n(lang) {
    const r = await fetch(`/api/i18n?lang=${lang}`);
    S.i18n = await r.json();
    document.documentElement.lang = lang;
    document.title = tr("web.title");
  }

  async function refused(r) {
    let detail = `${r.status}`;
    try { detail = (await r.json()).detail || detail; } catch (e) { /* not JSON */ }
    $("notice").textContent = detail;
    document.body.classList.add("refused");
  }

  // --- what arrives ---------------------------------------------------------------------------
  function take(m) {
    if (m.to === "room" && (m.kind === "table" || m.kind === "match_over")) {
      if (!S.room || m.version >= S.room.version) S.room = m;
      if (m.lines.length && !S.seen.has(m.id)) { S.seen.add(m.id); log(m.lines); }
    } else if (m.kind === "hand" && m.to === "me") {
      if (!S.hand || m.version >= S.hand.version) { S.hand = m; S.busy = false; }
    } else if (m.kind === "reply" && m.to === "me" && !S.seen.has(m.id)) {
      S.seen.add(m.id);
      $("notice").textContent = m.lines.join(" ");
      S.busy = false;
    }
  }
  function log(lines) {
    const ol = $("log");
    for (const line of lines) {
      const li = document.createElement("li");
      li.textContent = line;
      ol.prepend(li);
    }
    while (ol.children.length > 40) ol.lastChild.remove();
  }

  // --- drawing ----------------------------------------------------------------------------------
  function view() {
    const h = S.hand && S.room && S.hand.version >= S.room.version ? S.hand : null;
    return (h || S.room || {}).view;
  }
  function draw() {
    const v = view();
    if (!v) return;
    const names = (S.room && S.room.names) || (S.hand && S.hand.names) || [];
    const game = v.game;
    if (!game) { $("turn").textContent = tr("web.lobby"); return; }
    $("title").textContent = game === "535" ? "535" : "Cinquillo";
    const me = S.hand ? S.hand.view.seat : null;
    // whose turn, and the clock
    const mover = v.to_move;
    $("turn").textContent = v.over ? tr("web.over") : mover === null || mover === undefined ? "" :
      mover === me ? tr("web.your_turn") : tr("web.turn_of", {name: names[mover] || mover + 1});
    const deadline = (S.room && S.room.deadline) || null;
    S.deadline = deadline;
    tick();
    // seats
    const seats = $("seats");
    seats.innerHTML = "";
    for (let i = 0; i < v.players; i++) {
      const d = document.createElement("div");
      d.className = "seat" + (i === mover ? " moving" : "") + (i === me ? " me" : "");
      const bits = [`<b>${esc(names[i] || "#" + (i + 1))}</b>${i === me ? ` (${esc(tr("web.you"))})` : ""}`,
        `<span class="count">${esc(tr("web.cards_left", {n: v.hand_sizes[i]}))}</span>`,
        `<span>${esc(tr("web.score", {n: v.scores[i]}))}</span>`];
      if (v.chips) bits.push(`<span>${esc(tr("web.chips", {n: v.chips[i]}))}</span>`);
      if (v.teams) bits.push(`<span>${esc(tr("web.team", {n: v.teams[i] + 1}))}</span>`);
      d.innerHTML = bits.join(" ") + `<div class="backs">${Deck.back().repeat(Math.min(v.hand_sizes[i], 13))}</div>`;
      seats.appendChild(d);
    }
    const last = v.last_move || (v.trick_moves && v.trick_moves.length ? v.trick_moves[v.trick_moves.length - 1] : null);
    const fresh = last && JSON.stringify(last) !== S.lastMove;
    S.lastMove = last ? JSON.stringify(last) : null;
    if (game === "535") board535(v, fresh && last); else boardCinquillo(v, fresh && last);
    extras(v);
    drawHand(v, game);
    if (S.room && (S.room.kind === "match_over" || (S.room.view && S.room.view.over))) overScreen(names);
  }
  function boardCinquillo(v, fresh) {
    const b = $("board");
    b.innerHTML = "";
    for (const s of SUITS) {
      const row = document.createElement("div");
      row.className = "row";
      row.setAttribute("aria-label", S.i18n.suits[s]);
      const open = v.table[s];
      if (open) {
        const lo = RANKS.indexOf(Deck.parse(open.low).rank), hi = RANKS.indexOf(Deck.parse(open.high).rank);
        for (let i = lo; i <= hi; i++) {
          const code = `${RANKS[i]}${s}`;
          const isNew = fresh && fresh.move === code;
          row.insertAdjacentHTML("beforeend", Deck.spanish(code, cardName(code)).replace('class="card', `class="card${isNew ? " fresh" : ""}`));
        }
      } else {
        row.insertAdjacentHTML("beforeend", `<span class="empty">${esc(S.i18n.suits[s])}</span>`);
      }
      b.appendChild(row);
    }
  }
  function board535(v, fresh) {
    const b = $("board");
    const pts = (v.options && v.options.points) || {};
    const cards = v.pile.cards || [];
    b.innerHTML = `<div class="pile"><h2>${esc(tr("web.pile"))}</h2>` + (cards.length ?
      cards.map((r) => Deck.rank535(r, pts[r] ?? "", String(r)).replace('class="card', `class="card${fresh ? " fresh" : ""}`)).join("") :
      `<span class="empty">${esc(tr("web.pile_empty"))}</span>`) + "</div>";
  }
  function extras(v) {
    const bits = [];
    if (v.round) bits.push(tr("web.round", {n: v.round}));
    if (v.pot) bits.push(tr("web.pot", {n: v.pot}));
    if (v.blocked && v.blocked.length) bits.push(tr("web.blocked", {cards: v.blocked.map(cardName).join(", ")}));
    $("extra").textContent = bits.join(" · ");
  }
  function drawHand(v, game) {
    const hand = $("hand"), moves = $("moves");
    hand.innerHTML = ""; moves.innerHTML = "";
    if (!S.hand) { $("hand-title").textContent = S.spectator ? tr("web.spectator") : ""; return; }
    $("hand-title").textContent = tr("web.hand");
    const mine = S.hand.view;
    const current = S.room ? S.hand.version >= S.room.version : true;
    const acts = current && !S.busy ? S.hand.actions : [];
    const byMove = new Map(acts.map((a) => [a.move, a]));
    const pts = (mine.options && mine.options.points) || {};
    for (const c of mine.hand || []) {
      const code = String(c);
      const a = game === "535" ? null : byMove.get(code);
      const btn = document.createElement("button");
      btn.className = "cardbtn" + (a ? " legal" : " dim");
      const label = game === "535" ? String(c) : cardName(code);
      btn.setAttribute("aria-label", a ? a.label : label);
      btn.innerHTML = game === "535" ? Deck.rank535(c, pts[c] ?? "", label) : Deck.spanish(code, label);
      btn.dataset.card = code;
      if (a) { btn.dataset.move = a.move; btn.addEventListener("click", () => send(a)); }
      else { btn.setAttribute("aria-disabled", "true"); btn.tabIndex = game === "535" ? -1 : 0; }
      hand.appendChild(btn);
    }
    // Moves that are not one card: pass, and every 535 play (a combination of ranks).
    for (const a of acts) {
      if (game !== "535" && a.move !== "pass") continue;
      const btn = document.createElement("button");
      btn.className = "move";
      btn.dataset.move = a.move;
      btn.textContent = a.label;
      btn.setAttribute("aria-label", a.label);
      btn.addEventListener("click", () => send(a));
      moves.appendChild(btn);
    }
    if (!acts.length) moves.innerHTML = `<span class="wait">${esc(tr("web.no_moves"))}</span>`;
  }
  function overScreen(names) {
    const v = S.room.view;
    $("over").hidden = false;
    $("over-title").textContent = tr("web.over");
    const rows = (v.scores || []).map((s, i) => `<li${(v.winners || []).includes(i) ? ' class="won"' : ""}>${esc(names[i] || i + 1)}: ${esc(tr("web.score", {n: s}))}</li>`).join("");
    $("over-body").innerHTML = `<ol class="result">${rows}</ol>` + S.room.lines.map((l) => `<p>${esc(l)}</p>`).join("");
    const a = $("over-replay");
    a.textContent = tr("web.replay");
    a.href = `/replay/${S.table}?lang=${S.i18n.locale}`;
  }
  // A move brings several messages at once (the room's, the hand's, the AI's reply): the first is
  // drawn at once, and those that follow within the same frame are drawn together when it ends,
  // which leaves a loaded phone's CPU to the next ones.
  function paint() {
    if (S.painting) { S.dirty = true; return; }
    drawn();
    S.painting = true;
    requestAnimationFrame(() => {
      S.painting = false;
      if (S.dirty) { S.dirty = false; drawn(); }
    });
  }
  function drawn() {
    draw();
    const v = S.room ? S.room.version : -1;
    if (v !== S.drawn) { S.drawn = v; S.shownAt[v] = clock(); }
  }
  function tick() {
    if (!S.deadline) { $("clock").textContent = ""; return; }
    const s = Math.max(0, Math.round(S.deadline - Date.now() / 1000));
    $("clock").textContent = tr("web.clock", {s});
  }
  setInterval(tick, 1000);

  // --- sending ----------------------------------------------------------------------------------
  async function send(a) {
    if (S.busy) return;
    S.busy = true;
    S.sentAt = clock();
    const id = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
    // The move leaves first; the hand is dimmed while it travels (a redraw is not worth the wait).
    const sent = fetch(`/api/move?k=${encodeURIComponent(S.k)}`, {method: "POST",
      headers: {"content-type": "application/json"}, body: JSON.stringify({token: a.token, id})});
    $("notice").textContent = "";
    paint();
    const r = await sent;
    // The answer is read to its end (a body left unread holds its connection; one is the feed's).
    if (!r.ok) { S.busy = false; await refused(r); draw(); } else await r.text();
  }

  // --- following --------------------------------------------------------------------------------
  function follow() {
    const es = new EventSource(`/api/events?k=${encodeURIComponent(S.k)}`);
    es.addEventListener("state", async (e) => {
      const st = JSON.parse(e.data);
      S.spectator = st.spectator;
      if (!S.i18n || S.i18n.locale !== st.locale) await loadI18n(st.locale);
      $("conn").hidden = true;
      for (const m of st.messages) take(m);
      draw();
      S.drawn = S.room ? S.room.version : -1;
    });
    es.addEventListener("message", (e) => { take(JSON.parse(e.data)); S.lastId = e.lastEventId; paint(); });
    es.onerror = () => {
      if (es.readyState === EventSource.CLOSED) { $("notice").textContent = tr("web.refused.unauthorized"); return; }
      $("conn").hidden = false;
      $("conn").textContent = tr("web.reconnecting");
    };
    S.source = es;
  }

  // --- replay -----------------------------------------------------------------------------------
  async function replay(table) {
    const lang = new URLSearchParams(location.search).get("lang") || (navigator.language || "en").slice(0, 2);
    await loadI18n(lang === "es" ? "es" : "en");
    const r = await fetch(`/api/replay/${table}?lang=${S.i18n.locale}`);
    if (!r.ok) { await refused(r); return; }
    const rp = await r.json();
    S.table = table;
    let i = 0;
    $("mine").hidden = true;
    const bar = document.createElement("nav");
    bar.id = "steps";
    bar.innerHTML = ["first", "prev", "next", "last"].map((k) => `<button data-k="${k}">${esc(tr("web." + k))}</button>`).join("") + '<span id="step"></span>';
    $("main").prepend(bar);
    const show = () => {
      const st = rp.steps[i];
      S.room = {kind: "table", version: i, view: {...st.view, game: rp.game}, names: null, lines: []};
      S.hand = null;
      $("title").textContent = tr("web.replay_of", {table});
      draw();
      $("step").textContent = tr("web.step", {n: i, total: rp.steps.length - 1}) + (st.move ? ` — #${st.seat + 1}: ${st.move}` : "");
      const end = $("log");
      end.innerHTML = i === rp.steps.length - 1 ? `<li>${esc(tr("web.hands_at_end"))}: ` +
        rp.hands.map((h, s) => `#${s + 1}: ${(h || []).map((c) => rp.game === "535" ? c : cardName(String(c))).join(", ")}`).join(" · ") +
        `</li><li>${esc(tr("web.seed", {seed: rp.seed}))}</li>` + (rp.ok ? `<li>${esc(tr("web.verified"))}</li>` : "") : "";
      $("over").hidden = true;
    };
    bar.addEventListener("click", (e) => {
      const k = e.target.dataset && e.target.dataset.k;
      if (!k) return;
      i = k === "first" ? 0 : k === "last" ? rp.steps.length - 1 : Math.max(0, Math.min(rp.steps.length - 1, i + (k === "next" ? 1 : -1)));
      show();
    });
    show();
  }

  async function start() {
    const m = /^\/replay\/([A-Za-z0-9_-]+)$/.exec(location.pathname);
    if (m) return replay(m[1]);
    S.k = await credentials();
    if (!S.k) {
      if (!S.i18n) await loadI18n((navigator.language || "en").slice(0, 2) === "es" ? "es" : "en");
      if (!$("notice").textContent) $("notice").textContent = tr("web.refused.unauthorized");
      return;
    }
    const r = await fetch(`/api/state?k=${encodeURIComponent(S.k)}`);
    if (!r.ok) { await loadI18n("en"); await refused(r); return; }
    const st = await r.json();
    S.table = st.table;
    await loadI18n(st.locale);
    $("log-title").textContent = tr("web.last_moves");
    follow();
  }
  start();
})();
