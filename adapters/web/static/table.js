/* The web table: draws what the service sent this viewer (never works out a rule: what may be played
   is the hand's actions, what a round or the match came to is the message's outcome), sends the
   action tokens of what is pressed, and follows the table over Server-Sent Events.
   Accessible by construction: every card is a button named as it is said ("5 of coins"), a chosen
   535 card is aria-pressed, the turn is announced in a live region. */
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const RANKS = [1, 2, 3, 4, 5, 6, 7, 10, 11, 12];
  const SUITS = ["o", "c", "e", "b"];
  const S = {k: null, table: null, spectator: true, room: null, hand: null, i18n: null, seen: new Set(),
             lastMove: null, busy: false, sentAt: null, shownAt: {}, drawn: -1, painting: false, dirty: false,
             picked: [], roundSeen: 0, roundShown: null, overClosed: false, turnOf: null};
  window.cinq = S; // for the tests and the benchmark: the state the page draws from
  const tr = (key, p) => {
    let s = (S.i18n && S.i18n.t[key]) || key;
    for (const [k, v] of Object.entries(p || {})) s = s.split(`{${k}}`).join(String(v));
    return s;
  };
  // A plural text of the catalogue: "{n} card" / "{n} cards" (both languages: one form for 1).
  const trn = (key, n, p) => tr(Number(n) === 1 ? key : `${key}.plural`, {n, ...(p || {})});
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})[c]);
  const cardName = (code) => (S.i18n && S.i18n.cards[code]) || code;
  // A 535 card as it is said: its rank and what it costs if still held ("7, 2 points").
  const card535 = (rank, pts) => pts[rank] === undefined ? String(rank) : trn("web.card535", pts[rank], {rank});
  // A score as written: cabrón's split points "33/2" -> "16½", "43/6" -> "7⅙" (the outcome's rows carry
  // it written); a part with no glyph of its own in small figures, "7 ⁷⁄₁₂", never "7 7/12".
  const FR = {"1/2": "½", "1/3": "⅓", "2/3": "⅔", "1/4": "¼", "3/4": "¾", "1/5": "⅕", "2/5": "⅖",
              "3/5": "⅗", "4/5": "⅘", "1/6": "⅙", "5/6": "⅚", "1/8": "⅛", "3/8": "⅜", "5/8": "⅝", "7/8": "⅞"};
  const SUP = "⁰¹²³⁴⁵⁶⁷⁸⁹", SUB = "₀₁₂₃₄₅₆₇₈₉";
  const small = (n, digits) => String(n).replace(/\d/g, (d) => digits[d]);
  const score = (v) => {
    const m = /^(\d+)\/(\d+)$/.exec(String(v));
    if (!m) return String(v);
    const whole = Math.floor(+m[1] / +m[2]), part = +m[1] % +m[2], rest = `${part}/${m[2]}`;
    return ((whole || "") + (FR[rest] || ` ${small(part, SUP)}⁄${small(m[2], SUB)}`)).trim();
  };
  const joinNames = (list, word) => list.length < 2 ? list.join("") :
    tr(word || "web.and", {a: list.slice(0, -1).join(", "), b: list[list.length - 1]});
  // Wall-clock milliseconds comparable between pages (the benchmark times a click in one page to the
  // table drawn in another).
  const clock = () => performance.timeOrigin + performance.now();

  function theme(t) {
    const map = {bg_color: "--bg", text_color: "--fg", button_color: "--accent", button_text_color: "--accent-fg",
                 secondary_bg_color: "--panel"};
    for (const [k, v] of Object.entries(map)) if (t && t[k]) document.documentElement.style.setProperty(v, t[k]);
  }

  // The link goes to the API in a header (Authorization: Link), never in a URL.
  function linkHeader(more) { return Object.assign({authorization: `Link ${S.k}`}, more || {}); }

  function linkClaims(k) {
    // What a link says (not secret, only signed): {p, u, t, e}; null if it is not one.
    try { return JSON.parse(atob(k.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))); } catch (e) { return null; }
  }
  async function credentials() {
    const q = new URLSearchParams(location.search);
    const k = q.get("k");
    const initData = MiniApp.initData();
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
    $("log-title").textContent = tr("web.log");
    $("langs").setAttribute("aria-label", tr("web.lang"));
    for (const b of $("langs").querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.lang === lang));
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
      // After the end (someone asks for a rematch), the end's standings stay what the page shows.
      if (S.room && S.room.outcome && S.room.outcome.standings.over && !m.outcome) m.outcome = S.room.outcome;
      if (!S.room || m.version >= S.room.version) S.room = m;
      // Opened mid-match: the round's moves so far (the newest first, as the live ones come).
      if (m.recent && !S.seen.has(m.id)) log(m.recent.map(([s, w]) => `${nameOf(s)}: ${w}`).reverse(), true);
      if (m.lines.length && !S.seen.has(m.id)) log(m.lines);
      S.seen.add(m.id);
    } else if (m.kind === "hand" && m.to === "me") {
      if (!S.hand || m.version >= S.hand.version) { S.hand = m; S.busy = false; }
    } else if (m.kind === "reply" && m.to === "me" && !S.seen.has(m.id)) {
      S.seen.add(m.id);
      $("notice").textContent = m.lines.join(" ");
      S.busy = false;
    }
    // A round just ended: its result stays on screen until the player goes on (or moves).
    const o = m.outcome;
    if (o && o.round && !o.standings.over && o.round.n > S.roundSeen) {
      S.roundShown = {outcome: o, game: m.game};
      S.roundSeen = o.round.n;
    }
  }
  function log(lines, old) {
    const ul = $("log");
    for (const line of lines) {
      const li = document.createElement("li");
      li.textContent = line;
      if (old) ul.appendChild(li); else ul.prepend(li);
    }
    while (ul.children.length > 40) ul.lastChild.remove();
  }
  function names() { return (S.room && S.room.names) || (S.hand && S.hand.names) || []; }
  function nameOf(seat) { return names()[seat] || tr("web.player", {n: seat + 1}); }

  // --- drawing ----------------------------------------------------------------------------------
  function view() {
    const h = S.hand && S.room && S.hand.version >= S.room.version ? S.hand : S.hand && !S.room ? S.hand : null;
    return (h || S.room || {}).view;
  }
  function me() { return S.hand && S.hand.view ? S.hand.view.seat : null; }
  function draw() {
    const v = view();
    if (!v) return;
    const game = v.game;
    if (!game || v.status) { lobby(v); return; }  // a lobby (or a closed one): no engine view yet
    $("title").textContent = tr(`web.game.${game}`);
    const seat = me();
    const mover = v.over ? null : v.to_move;
    const turnText = v.over ? tr("web.over") : mover === null || mover === undefined ? "" :
      mover === seat ? tr("web.your_turn") : tr("web.turn_of", {name: nameOf(mover)});
    if ($("turn").textContent !== turnText) $("turn").textContent = turnText; // the live region speaks it once
    if (mover === seat && S.turnOf !== (S.hand && S.hand.version)) { S.turnOf = S.hand && S.hand.version; MiniApp.haptic("turn"); }
    S.deadline = (S.hand && S.hand.deadline) || (S.room && S.room.deadline) || null;
    tick();
    seats(v, seat, mover);
    const last = v.last_move || (v.trick_moves && v.trick_moves.length ? v.trick_moves[v.trick_moves.length - 1] : null);
    const fresh = last && JSON.stringify(last) !== S.lastMove;
    S.lastMove = last ? JSON.stringify(last) : null;
    if (game === "535") board535(v, fresh && last); else boardCinquillo(v, fresh && last, last);
    extras(v);
    drawHand(v, game);
    roundPanel();
    const done = (S.room && (S.room.kind === "match_over" || (S.room.view && S.room.view.over))) ||
      (S.hand && S.hand.outcome && S.hand.outcome.standings.over);
    if (done && !S.overClosed) overScreen();
    MiniApp.backButton(!$("over").hidden || !$("round").hidden);
  }

  function seats(v, seat, mover) {
    const n = v.players;
    const base = seat === null || seat === undefined ? 0 : seat;
    const sides = {left: $("seat-left"), top: $("seat-top"), right: $("seat-right")};
    for (const el of [...Object.values(sides), $("me-seat")]) el.innerHTML = "";
    const lastOf = (S.hand && S.hand.view === v ? S.hand.last : null) || (S.room && S.room.last) || {};
    for (let rel = 0; rel < n; rel++) {
      const i = (base + rel) % n;
      const d = document.createElement("section");
      d.className = "seat" + (i === mover ? " moving" : "") + (i === seat ? " me" : "");
      d.setAttribute("aria-label", nameOf(i));
      if (i === mover) d.setAttribute("aria-current", "true");
      const facts = [trn("web.cards_left", v.hand_sizes[i])];
      if (v.game === "535") facts.push(tr("web.pts", {n: v.scores[i]}));
      else if (v.scoring === "points") facts.push(tr("web.pts", {n: score(v.scores[i])}));
      else if ((v.rounds_to_win || 1) > 1) facts.push(trn("web.rounds_won", v.round_wins[i]));
      if (v.chips) facts.push(trn("web.chips", v.chips[i]));
      const team = (v.teams || []).find((t) => t.includes(i));
      const partner = team ? team.find((s) => s !== i) : undefined;
      let badge = "";
      if (partner !== undefined && seat !== null && partner === seat) badge = `<span class="badge">${esc(tr("web.your_partner"))}</span>`;
      else if (partner !== undefined && seat !== i) facts.push(tr("web.partner", {name: nameOf(partner)}));
      const passed = (v.passed || []).includes(i);
      const last = passed ? tr("web.passed") : lastOf[i] ? tr("web.last_action", {move: lastOf[i]}) : "";
      const you = i === seat ? ` <span class="badge">${esc(tr("web.you_badge"))}</span>` : "";
      d.innerHTML = `<b>${esc(nameOf(i))}${you} ${badge}</b><span class="facts">${facts.map((f) => `<span>${esc(f)}</span>`).join("")}</span>` +
        `<span class="last">${esc(last)}</span>` +
        (i === seat ? "" : `<div class="backs" aria-hidden="true">${Deck.back().repeat(Math.min(v.hand_sizes[i], 13))}</div>`);
      if (rel === 0 && seat !== null && seat !== undefined) $("me-seat").appendChild(d);
      else if (n === 2 || (rel > 1 && rel < n - 1) || (rel === 0)) sides.top.appendChild(d);
      else if (rel === 1) sides.left.appendChild(d);
      else sides.right.appendChild(d);
    }
  }

  function boardCinquillo(v, fresh, last) {
    const b = $("board");
    b.innerHTML = "";
    const blocked = new Set(v.blocked || []);
    for (const s of SUITS) {
      const row = document.createElement("div");
      row.className = "row";
      row.setAttribute("role", "group");
      row.setAttribute("aria-label", S.i18n.suits[s]);
      const open = v.table[s];
      const lo = open ? RANKS.indexOf(Deck.parse(open.low).rank) : 99, hi = open ? RANKS.indexOf(Deck.parse(open.high).rank) : -1;
      // Ten slots, the 5 of every suit in one column, as on the table.
      for (let i = 0; i < RANKS.length; i++) {
        const code = `${RANKS[i]}${s}`;
        const slot = document.createElement("span");
        slot.className = "slot";
        // A place on the table, "o-5" (suit, rank); data-card only where a card is drawn.
        slot.dataset.slot = `${s}-${RANKS[i]}`;
        if (blocked.has(code)) {
          // Cabrón: jumped over, it stays in a hand (C-13): marked, never drawn as on the table.
          slot.classList.add("blocked");
          slot.textContent = "✕";
          slot.setAttribute("role", "img");
          slot.setAttribute("aria-label", tr("web.blocked_card", {card: cardName(code)}));
        } else if (i >= lo && i <= hi) {
          const isLast = last && last.move === code;
          if (isLast) { slot.classList.add("last"); slot.setAttribute("title", tr("web.last_played")); }
          slot.dataset.card = code;
          slot.innerHTML = Deck.spanish(code, cardName(code)).replace('class="card', `class="card${fresh && fresh.move === code ? " fresh" : ""}`);
        }
        row.appendChild(slot);
      }
      b.appendChild(row);
    }
  }
  function board535(v, fresh) {
    const b = $("board");
    const pts = (v.options && v.options.points) || {};
    const cards = v.pile.cards || [];
    const lastOf = (S.room && S.room.last) || {};
    const by = v.last_player === null || v.last_player === undefined ? "" :
      tr("web.pile_by", {move: lastOf[v.last_player] || "", name: nameOf(v.last_player)});
    b.innerHTML = `<div class="pile" role="group" aria-label="${esc(tr("web.pile"))}">` + (cards.length ?
      cards.map((r) => Deck.rank535(r, pts[r] ?? "", esc(card535(r, pts))).replace('class="card', `class="card${fresh ? " fresh" : ""}`)).join("") +
      `<span class="who">${esc(by)}</span>` :
      `<span class="empty">${esc(tr("web.pile_empty"))}</span>`) + "</div>";
  }
  function extras(v) {
    const bits = [];
    if (v.round) bits.push(tr("web.round", {n: v.round}));
    if (v.game === "535") bits.push(tr("web.lower_wins", {target: (v.options || {}).target}));
    else if (v.scoring === "points" && v.target) bits.push(tr("web.to_points", {target: v.target}));
    else if ((v.rounds_to_win || 1) > 1) bits.push(tr("web.to_rounds", {target: v.rounds_to_win}));
    if (v.pot !== null && v.pot !== undefined) bits.push(tr("web.pot", {n: v.pot}));
    $("extra").textContent = bits.join(" · ");
  }

  function drawHand(v, game) {
    const hand = $("hand"), moves = $("moves");
    hand.innerHTML = ""; moves.innerHTML = ""; $("combo").textContent = "";
    if (!S.hand) { $("hand-title").textContent = S.spectator ? tr("web.spectator") : ""; return; }
    $("hand-title").textContent = tr("web.hand");
    const mine = S.hand.view;
    const current = S.room ? S.hand.version >= S.room.version : true;
    const acts = current && !S.busy ? S.hand.actions : [];
    if (game === "535") hand535(mine, acts); else handCinquillo(mine, acts);
    const pass = acts.find((a) => a.kind === "pass");
    if (pass) {
      // Passing is set apart from the cards: never the first thing under a finger.
      const btn = document.createElement("button");
      btn.type = "button";
      btn.className = "pass";
      btn.dataset.move = "pass";
      btn.textContent = tr("web.pass");
      btn.addEventListener("click", () => send(pass));
      moves.appendChild(btn);
    }
    if (!acts.length) moves.insertAdjacentHTML("afterbegin", `<span class="wait">${esc(tr(mine.over ? "web.over" : "web.no_moves"))}</span>`);
  }
  function handCinquillo(mine, acts) {
    const byMove = new Map(acts.map((a) => [a.move, a]));
    for (const code of mine.hand || []) {
      const a = byMove.get(code);
      const btn = document.createElement("button");
      btn.type = "button";
      btn.className = "cardbtn" + (a ? " legal" : " dim");
      btn.setAttribute("aria-label", cardName(code));
      btn.innerHTML = Deck.spanish(code, "");
      btn.dataset.card = code;
      if (a) { btn.dataset.move = a.move; btn.addEventListener("click", () => send(a)); }
      else {
        btn.setAttribute("aria-disabled", "true");
        btn.addEventListener("click", () => {
          // What can be played instead, from the hand's actions (the page works out no rule).
          const can = acts.filter((x) => x.kind !== "pass").map((x) => cardName(x.move));
          $("notice").textContent = !acts.length ? tr("web.not_your_turn") :
            tr(can.length ? "web.not_playable" : "web.only_pass", {card: cardName(code), cards: joinNames(can, "web.or")});
        });
      }
      $("hand").appendChild(btn);
    }
  }
  // 535: the cards are chosen one by one (aria-pressed); a card that can go with the choice towards
  // some move of the hand's actions is lit; the moves the choice makes exactly are the Play buttons.
  const ranksOf = (move) => move.split(" ").slice(1).map(Number).sort((a, b) => a - b);
  const covers = (big, small) => {
    const left = [...big];
    for (const r of small) { const i = left.indexOf(r); if (i < 0) return false; left.splice(i, 1); }
    return true;
  };
  function hand535(mine, acts) {
    const plays = acts.filter((a) => a.kind !== "pass");
    const hand = mine.hand || [];
    S.picked = S.picked.filter((i) => i < hand.length);
    if (!plays.length) S.picked = [];
    const chosen = S.picked.map((i) => hand[i]).sort((a, b) => a - b);
    const pts = (mine.options && mine.options.points) || {};
    hand.forEach((rank, i) => {
      const on = S.picked.includes(i);
      const withIt = on ? chosen : [...chosen, rank].sort((a, b) => a - b);
      const possible = plays.some((a) => covers(ranksOf(a.move), withIt));
      const btn = document.createElement("button");
      btn.type = "button";
      btn.className = "cardbtn" + (possible ? " legal" : " dim");
      btn.setAttribute("aria-label", card535(rank, pts));
      btn.setAttribute("aria-pressed", String(on));
      btn.dataset.card = String(rank);
      btn.innerHTML = Deck.rank535(rank, pts[rank] ?? "", "");
      if (!possible && !on) btn.setAttribute("aria-disabled", "true");
      btn.addEventListener("click", () => {
        if (!plays.length) { $("notice").textContent = tr("web.not_your_turn"); return; }
        if (on) S.picked = S.picked.filter((j) => j !== i);
        else if (possible) S.picked = [...S.picked, i];
        else { $("notice").textContent = tr("web.no_combo"); return; }
        $("notice").textContent = "";
        draw();
      });
      $("hand").appendChild(btn);
    });
    if (!plays.length) return;
    const exact = plays.filter((a) => { const r = ranksOf(a.move); return r.length === chosen.length && covers(r, chosen); });
    $("combo").textContent = chosen.length ? tr("web.selected", {cards: chosen.join(" ")}) : tr("web.select_cards");
    for (const a of exact) {
      const btn = document.createElement("button");
      btn.type = "button";
      btn.className = "move";
      btn.dataset.move = a.move;
      btn.textContent = tr("web.play_as", {move: a.label});
      btn.addEventListener("click", () => { S.picked = []; send(a); });
      $("moves").appendChild(btn);
    }
    if (chosen.length) {
      const clear = document.createElement("button");
      clear.type = "button";
      clear.className = "move quiet";
      clear.textContent = tr("web.clear");
      clear.addEventListener("click", () => { S.picked = []; draw(); });
      $("moves").appendChild(clear);
    }
  }

  // --- a round's result and the end ------------------------------------------------------------
  function standingsTable(st, round, left) {
    const seat = me();
    const unit = (x) => st.scoring === "round_wins" ? trn("web.rounds_won", x) : tr("web.pts", {n: x});
    const chips = st.rows.some((r) => r.chips !== null && r.chips !== undefined);
    const head = [tr("web.col.rank"), tr("web.col.player")];
    if (round && round.points) head.push(tr("web.col.round"));
    head.push(tr("web.col.total"));
    if (chips) head.push(tr("web.col.chips"));
    if (left) head.push(tr("web.col.left"));
    const rows = st.order.map((s) => {
      const r = st.rows[s];
      const won = (st.winners || []).includes(s);
      const cells = [`${r.rank}.`, esc(nameOf(s)) + (s === seat ? ` (${esc(tr("web.you"))})` : "") + (won ? " ★" : "")];
      if (round && round.points) cells.push(esc(String(round.points[s]).replace(/^(?!0$)(?![-+])/, "+")));
      cells.push(esc(unit(r.shown)));
      if (chips) cells.push(esc(String(r.chips) + (round && round.chips ? ` (${round.chips[s] > 0 ? "+" : ""}${round.chips[s]})` : "")));
      if (left) cells.push(esc(String(left[s])));
      return `<tr class="${won ? "won" : ""}${s === seat ? " me" : ""}">${cells.map((c, i) => `<td${i > 1 ? ' class="num"' : ""}>${c}</td>`).join("")}</tr>`;
    }).join("");
    return `<table class="score"><thead><tr>${head.map((h, i) => `<th${i > 1 ? ' class="num"' : ""} scope="col">${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows}</tbody></table>`;
  }
  function roundWords(r, game) {
    const who = joinNames((r.winners || []).map(nameOf));
    if (game === "535") return tr("web.round_535", {names: who});
    if (r.end === "blocked") return tr("web.round_blocked", {names: who});
    return tr((r.winners || []).length > 1 ? "web.round_out_pair" : "web.round_out", {names: who});
  }
  function roundPanel() {
    const box = $("round");
    if (!S.roundShown) { box.hidden = true; return; }
    const {outcome: o, game} = S.roundShown;
    $("round-title").textContent = tr("web.round_title", {n: o.round.n});
    const note = o.standings.lower_wins ? `<p>${esc(tr("web.lower_wins", {target: o.standings.target}))}</p>` : "";
    $("round-body").innerHTML = `<p>${esc(roundWords(o.round, game))}</p>` +
      standingsTable(o.standings, o.round, o.round.cards_left) + note;
    $("round-close").textContent = tr("web.continue");
    box.hidden = false;
  }
  function closeRound() { S.roundShown = null; $("round").hidden = true; MiniApp.backButton(!$("over").hidden); }
  $("round-close").addEventListener("click", closeRound);

  function overScreen() {
    const m = S.room && S.room.outcome ? S.room : S.hand;
    const v = (S.room || S.hand).view;
    const o = m && m.outcome;
    const winners = (o && o.standings.winners) || v.winners || (v.result || {}).winners || [];
    const seat = me();
    const title = seat !== null && seat !== undefined ? tr(winners.includes(seat) ? "web.you_won" : "web.you_lost") :
      tr(winners.length > 1 ? "web.winners" : "web.winner", {names: joinNames(winners.map(nameOf))});
    if ($("over").hidden) MiniApp.haptic(winners.includes(seat) ? "success" : "warning");
    $("over").hidden = false;
    $("over-title").textContent = title;
    let body = "";
    if (o && o.round && !(o.standings.scoring === "round_wins" && (o.standings.target || 1) <= 1)) {
      body += `<p>${esc(tr("web.round_title", {n: o.round.n}))}: ${esc(roundWords(o.round, v.game))}</p>`;
    }
    if (o) {
      body += `<h3>${esc(tr("web.standings"))}</h3>` + standingsTable(o.standings, null, v.hand_sizes);
      if (o.standings.lower_wins) body += `<p>${esc(tr("web.lower_wins", {target: o.standings.target}))}</p>`;
    }
    const seed = o && o.seed;  // only when the deal is this table's own (no other table plays it)
    if (seed) body += `<p class="seed">${esc(tr("web.fair_deal", {seed}))}</p>`;
    $("over-body").innerHTML = body;
    const a = $("over-replay");
    a.textContent = tr("web.replay");
    a.href = `/replay/${S.table}?lang=${S.i18n.locale}`;
    // The service's rematch: the same people, options and seats; the page follows it when it exists.
    const again = S.hand && (S.hand.actions || []).find((x) => x.kind === "rematch");
    if (again && !$("over-again")) {
      const btn = document.createElement("button");
      btn.type = "button";
      btn.id = "over-again";
      btn.className = "move";
      btn.textContent = again.label;
      btn.addEventListener("click", () => { btn.disabled = true; S.overClosed = false; send(again, true); follow_rematch(); });
      $("over-body").parentElement.querySelector(".links").prepend(btn);
    }
  }
  async function follow_rematch() {
    // The rematch is made by the service a moment after the press: ask for its link until it is there.
    for (let i = 0; i < 40; i++) {
      const r = await fetch("/api/next", {headers: linkHeader()});
      if (r.ok) {
        const q = new URLSearchParams(location.search);
        q.set("k", (await r.json()).k);
        location.search = q.toString();
        return;
      }
      await r.text();
      await new Promise((ok) => setTimeout(ok, 300));
    }
  }
  function closeOver() { S.overClosed = true; $("over").hidden = true; MiniApp.backButton(!$("round").hidden); }
  MiniApp.on("back_button_pressed", () => { if (!$("round").hidden) closeRound(); else if (!$("over").hidden) closeOver(); });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && !$("over").hidden) closeOver(); });

  function lobby(v) {
    $("turn").textContent = tr("web.lobby");
    const seatName = (i) => (v.seats || [])[i] || tr("web.player", {n: i + 1});
    const waiting = (v.waiting || []).map(seatName);
    $("board").innerHTML = `<div id="lobby"><p>${esc(tr(`web.game.${v.game || "cinquillo"}`))}</p>` +
      `<p>${esc(tr("web.players"))}: ${esc((v.seats || []).map((s, i) => seatName(i)).join(", "))}</p>` +
      (waiting.length ? `<p role="status">${esc(tr("web.rematch_waiting", {names: joinNames(waiting)}))}</p>` : "") + "</div>";
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
    const el = $("clock");
    if (!S.deadline) { el.textContent = ""; el.classList.remove("urgent"); return; }
    const s = Math.max(0, Math.round(S.deadline - Date.now() / 1000));
    el.textContent = s > 0 ? tr("web.clock", {s}) : tr("web.time_up");
    el.classList.toggle("urgent", s <= 10);
  }
  setInterval(tick, 1000);

  // --- sending ----------------------------------------------------------------------------------
  async function send(a, keep) {
    if (S.busy && !keep) return;
    S.busy = true;
    S.sentAt = clock();
    const id = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
    // The move leaves first; the hand is dimmed while it travels (a redraw is not worth the wait).
    const sent = fetch("/api/move", {method: "POST",
      headers: linkHeader({"content-type": "application/json"}), body: JSON.stringify({token: a.token, id})});
    $("notice").textContent = "";
    if (S.roundShown) closeRound(); // the player moved on
    paint();
    const r = await sent;
    // The answer is read to its end (a body left unread holds its connection; one is the feed's).
    if (!r.ok) { S.busy = false; await refused(r); draw(); } else await r.text();
  }

  // --- following --------------------------------------------------------------------------------
  // The feed is read with fetch, not EventSource, so that the link rides in a header (never in a
  // URL, where logs and proxies keep it): the same Server-Sent Events, parsed here, and the same
  // resumption (Last-Event-ID: the last id seen).  A refused credential stops it; a full server
  // (429/503) or a dropped connection is retried after its Retry-After or a doubling wait.
  function follow() {
    const lang = new URLSearchParams(location.search).get("lang");
    let wait = 1000;
    const onState = async (data) => {
      const st = JSON.parse(data);
      S.spectator = st.spectator;
      if (!S.i18n || S.i18n.locale !== st.locale) await loadI18n(st.locale);
      $("conn").hidden = true;
      for (const m of st.messages) take(m);
      draw();
      S.drawn = S.room ? S.room.version : -1;
    };
    const dispatch = async (ev) => {
      if (ev.id !== undefined) S.lastId = ev.id;
      if (ev.event === "state") await onState(ev.data);
      else if (ev.event === "message") { take(JSON.parse(ev.data)); paint(); }
    };
    const run = async () => {
      for (;;) {
        let r = null;
        try {
          const headers = linkHeader({accept: "text/event-stream"});
          if (S.lastId) headers["last-event-id"] = S.lastId;
          r = await fetch(`/api/events${lang ? `?lang=${lang}` : ""}`, {headers, cache: "no-store"});
          if ([400, 401, 403, 404].includes(r.status)) { await refused(r); return; }
          if (r.ok && r.body) {
            wait = 1000;
            const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
            let buf = "", ev = {};
            for (;;) {
              const {value, done} = await reader.read();
              if (done) break;
              buf += value;
              const lines = buf.split("\n");
              buf = lines.pop();
              for (let line of lines) {
                if (line.endsWith("\r")) line = line.slice(0, -1);
                if (line === "") { if (ev.event || ev.data !== undefined) await dispatch(ev); ev = {}; continue; }
                if (line.startsWith(":")) continue;
                const c = line.indexOf(":");
                const name = c < 0 ? line : line.slice(0, c);
                const val = c < 0 ? "" : line.slice(c + 1).replace(/^ /, "");
                if (name === "data") ev.data = ev.data === undefined ? val : `${ev.data}\n${val}`;
                else if (name === "event" || name === "id") ev[name] = val;
              }
            }
          } else await r.text();
        } catch (e) { /* the connection went: reconnect below */ }
        $("conn").hidden = false;
        $("conn").textContent = tr("web.reconnecting");
        const after = r && Number(r.headers.get("retry-after"));
        await new Promise((ok) => setTimeout(ok, after ? after * 1000 : wait));
        wait = Math.min(wait * 2, 15000);
      }
    };
    run();
  }

  // The language: the page asks the service for its texts and its feed in the other one.
  $("langs").addEventListener("click", (e) => {
    const lang = e.target.dataset && e.target.dataset.lang;
    if (!lang || (S.i18n && S.i18n.locale === lang)) return;
    const q = new URLSearchParams(location.search);
    q.set("lang", lang);
    location.search = q.toString();
  });

  // --- replay -----------------------------------------------------------------------------------
  async function replay(table) {
    const lang = new URLSearchParams(location.search).get("lang") || (navigator.language || "en").slice(0, 2);
    await loadI18n(lang === "es" ? "es" : "en");
    const r = await fetch(`/api/replay/${table}?lang=${S.i18n.locale}`);
    if (!r.ok) { await refused(r); return; }
    const rp = await r.json();
    S.table = table;
    S.overClosed = true;
    let i = 0;
    $("mine").hidden = true;
    const bar = document.createElement("nav");
    bar.id = "steps";
    bar.innerHTML = ["first", "prev", "next", "last"].map((k) => `<button type="button" data-k="${k}">${esc(tr("web." + k))}</button>`).join("") + '<span id="step" role="status"></span>';
    $("main").prepend(bar);
    const show = () => {
      const st = rp.steps[i];
      S.room = {kind: "table", version: i, view: {...st.view, game: rp.game}, names: rp.names, lines: [], last: {}};
      S.hand = null;
      draw();
      $("title").textContent = tr("web.replay_title", {table, game: tr(`web.game.${rp.game}`)});
      const v = S.room.view;
      if (!v.over && v.to_move !== null && v.to_move !== undefined) $("turn").textContent = tr("web.replay_turn", {name: nameOf(v.to_move)});
      $("step").textContent = tr("web.step", {n: i, total: rp.steps.length - 1}) +
        (st.said ? ` — ${tr("web.replay_move", {name: nameOf(st.seat), move: st.said})}` : "");
      const end = $("log");
      const said = (h) => (h || []).map((c) => rp.game === "535" ? c : cardName(String(c))).join(", ");
      end.innerHTML = i === rp.steps.length - 1 ? `<li>${esc(tr("web.hands_at_end"))}: ` +
        rp.hands.map((h, s) => `${esc(nameOf(s))}: ${esc(said(h))}`).join(" · ") +
        `</li><li class="seed">${esc(tr("web.seed", {seed: rp.seed}))}</li>` + (rp.ok ? `<li>${esc(tr("web.verified"))}</li>` : "") : "";
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

  // --- the deal of the day ----------------------------------------------------------------------
  // The same for everyone, once a day (POST /api/daily): the person's attempt opens here, or, once
  // played, their standing is shown.  Who they are comes from their link, or from a Mini App's initData.
  async function daily(game) {
    const id = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
    const headers = {"content-type": "application/json"};
    const body = {game, id};
    if (S.k) headers.authorization = `Link ${S.k}`; else body.init_data = MiniApp.initData();
    const r = await fetch(`/api/daily?lang=${S.i18n.locale}`, {method: "POST", headers, body: JSON.stringify(body)});
    if (!r.ok) { await refused(r); return; }
    const d = await r.json();
    if (d.status === "playing") { location.href = `/t?k=${encodeURIComponent(d.k)}`; return; }
    $("over").hidden = false;
    $("over-title").textContent = tr("web.daily");
    $("over-body").innerHTML = d.text.split("\n").map((l) => `<p>${esc(l)}</p>`).join("");
    $("over-replay").textContent = "";
    S.overClosed = false;
  }
  function dailyEntry() {
    const nav = $("daily");
    nav.hidden = false;
    nav.setAttribute("aria-label", tr("web.daily"));
    nav.innerHTML = ["cinquillo", "535"].map((g) => `<button type="button" class="move" data-g="${g}">${esc(tr("web.daily." + g))}</button>`).join(" ");
    nav.onclick = (e) => { const g = e.target.dataset && e.target.dataset.g; if (g) daily(g); };
  }

  // --- the level before the deal (cinq play --web without one: adapters/web/local.py) -----------
  // The game, the AI players' three levels (one pressed: medium, as /play without one) and Deal.
  async function chooser(q) {
    const lang = q.get("lang");
    await loadI18n(lang === "es" || lang === "en" ? lang : (navigator.language || "en").slice(0, 2) === "es" ? "es" : "en");
    const game = q.get("game") === "535" ? "535" : "cinquillo";
    $("title").textContent = tr(`web.game.${game}`);
    $("mine").hidden = true;
    $("log-box").hidden = true;
    let level = "medium";
    const box = document.createElement("section");
    box.id = "levels";
    box.setAttribute("aria-labelledby", "levels-title");
    box.innerHTML = `<h2 id="levels-title">${esc(tr("web.level"))}</h2><div role="group" aria-labelledby="levels-title">` +
      ["easy", "medium", "hard"].map((l) => `<button type="button" class="level" data-level="${l}" aria-pressed="${l === level}">${esc(tr("web.level." + l))}</button>`).join("") +
      `</div><p><button type="button" id="deal" class="move">${esc(tr("web.deal"))}</button></p>`;
    $("board").replaceChildren(box);
    box.addEventListener("click", async (e) => {
      const t = e.target.closest("button");
      if (!t) return;
      if (t.dataset.level) {
        level = t.dataset.level;
        for (const b of box.querySelectorAll("[data-level]")) b.setAttribute("aria-pressed", String(b === t));
        return;
      }
      t.disabled = true;
      const r = await fetch(`/api/new?lang=${S.i18n.locale}`, {method: "POST",
        headers: {"content-type": "application/json", authorization: `Start ${q.get("s") || ""}`},
        body: JSON.stringify({level})});
      if (!r.ok) { t.disabled = false; await refused(r); return; }
      location.href = `/t?k=${encodeURIComponent((await r.json()).k)}&lang=${S.i18n.locale}`;
    });
  }

  async function start() {
    theme(MiniApp.theme());
    MiniApp.on("theme_changed", (d) => theme(d && d.theme_params));
    MiniApp.ready();
    const m = /^\/replay\/([A-Za-z0-9_-]+)$/.exec(location.pathname);
    if (m) return replay(m[1]);
    const q = new URLSearchParams(location.search);
    if (location.pathname === "/new") return chooser(q);
    const initData = MiniApp.initData();
    if (initData && !q.get("k") && !q.get("table") && !new URLSearchParams(initData).get("start_param")) {
      // A Mini App opened from the bot's menu, on no table: the deal of the day.
      const user = new URLSearchParams(initData).get("user") || "";
      await loadI18n(q.get("lang") || (user.includes('"language_code":"es') ? "es" : "en"));
      $("turn").textContent = tr("web.daily");
      return dailyEntry();
    }
    S.k = await credentials();
    const lang = new URLSearchParams(location.search).get("lang");
    if (!S.k) {
      if (!S.i18n) await loadI18n(lang || ((navigator.language || "en").slice(0, 2) === "es" ? "es" : "en"));
      if (!$("notice").textContent) $("notice").textContent = tr("web.refused.unauthorized");
      return;
    }
    const r = await fetch(`/api/state${lang ? `?lang=${lang}` : ""}`, {headers: linkHeader()});
    if (!r.ok) { await loadI18n(lang || "en"); await refused(r); return; }
    const st = await r.json();
    S.table = st.table;
    await loadI18n(st.locale);
    follow();
    const claims = linkClaims(S.k);
    if (claims && claims.p) dailyEntry();  // a person: today's deal is one tap away
  }
  start();
})();
