/* The Spanish deck as SVG, drawn here (no image files): oros, copas, espadas, bastos; 1-7, Sota (10),
   Caballo (11), Rey (12); and 535's cards, a rank with its points. */
"use strict";
const Deck = (() => {
  const FACE = {10: "S", 11: "C", 12: "R"};
  const COLOR = {o: "#c8961e", c: "#c0392b", e: "#2c5f8a", b: "#3d7a2a"};
  // One pip of each suit, in a 20x20 box.
  const PIP = {
    o: '<circle cx="10" cy="10" r="8" fill="#e8b832" stroke="#8a6212" stroke-width="1.5"/><circle cx="10" cy="10" r="4" fill="none" stroke="#8a6212" stroke-width="1.2"/>',
    c: '<path d="M3 3h14c0 6-3 9-5.5 9.5V16h3v2h-9v-2h3v-3.5C6 12 3 9 3 3z" fill="#d04a3a" stroke="#7a1e14" stroke-width="1.2"/>',
    e: '<path d="M10 1l2 3v10h-4V4z" fill="#b8c8d8" stroke="#2c4a6a" stroke-width="1"/><path d="M5 14h10v1.6H5z" fill="#2c4a6a"/><path d="M9 15.6h2V19H9z" fill="#6a4a2a"/>',
    b: '<path d="M8 1.5c2-1 4.5 0 4.5 2.5L12 18.5c-.2 1-2.6 1-2.8 0L7 4c-.2-1 0-2 1-2.5z" fill="#8a5a2a" stroke="#4a2e12" stroke-width="1"/><circle cx="10.8" cy="7" r="1.2" fill="#4a2e12"/><circle cx="9.4" cy="12" r="1.1" fill="#4a2e12"/>',
  };
  // Where the pips go for 1-7 (x, y in a 60x90 card); figures get one big pip.
  const SPOTS = {
    1: [[30, 45]], 2: [[30, 24], [30, 66]], 3: [[30, 20], [30, 45], [30, 70]],
    4: [[18, 24], [42, 24], [18, 66], [42, 66]], 5: [[18, 22], [42, 22], [30, 45], [18, 68], [42, 68]],
    6: [[18, 20], [42, 20], [18, 45], [42, 45], [18, 70], [42, 70]],
    7: [[18, 18], [42, 18], [30, 32], [18, 48], [42, 48], [18, 72], [42, 72]],
  };
  function parse(code) {
    const m = /^(\d+)([oceb])$/.exec(code);
    return m ? {rank: +m[1], suit: m[2]} : null;
  }
  function frame(inner, label, cls) {
    // Without a label the drawing is decoration (a button around it says what it is).
    const named = label ? `role="img" aria-label="${label}"` : 'aria-hidden="true"';
    return `<svg class="card ${cls || ""}" viewBox="0 0 60 90" ${named}>` +
      `<rect x="1" y="1" width="58" height="88" rx="6" fill="#fffdf6" stroke="#5a4a3a" stroke-width="1.5"/>${inner}</svg>`;
  }
  function spanish(code, label) {
    const c = parse(code);
    if (!c) return "";
    const col = COLOR[c.suit], pip = PIP[c.suit];
    const corner = FACE[c.rank] || String(c.rank);
    let inner = `<text x="6" y="14" font-size="11" font-weight="700" fill="${col}">${corner}</text>` +
      `<text x="54" y="84" font-size="11" font-weight="700" fill="${col}" text-anchor="end">${corner}</text>`;
    if (FACE[c.rank]) {
      // A figure: a framed panel in the suit's colour, the pip held high, the letter below.
      inner += `<rect x="12" y="14" width="36" height="62" rx="4" fill="${col}" opacity=".16"/>` +
        `<g transform="translate(18 18) scale(1.2)">${pip}</g>` +
        `<text x="30" y="68" font-size="20" font-weight="700" fill="${col}" text-anchor="middle">${corner}</text>`;
    } else {
      const s = c.rank === 1 ? 1.9 : 0.8, d = 10 * s;
      for (const [x, y] of SPOTS[c.rank]) inner += `<g transform="translate(${x - d} ${y - d}) scale(${s})">${pip}</g>`;
    }
    return frame(inner, label, `s-${c.suit}`);
  }
  function rank535(rank, points, label) {
    const inner = `<text x="30" y="52" font-size="30" font-weight="700" fill="#3a2a6a" text-anchor="middle">${rank}</text>` +
      `<text x="6" y="14" font-size="10" fill="#3a2a6a">${rank}</text>` +
      `<text x="30" y="80" font-size="10" fill="#7a5a2a" text-anchor="middle">${points} pt</text>`;
    return frame(inner, label, "r535");
  }
  function back() {
    return `<svg class="card back" viewBox="0 0 60 90" aria-hidden="true">` +
      `<rect x="1" y="1" width="58" height="88" rx="6" fill="#7a2430" stroke="#3a1018" stroke-width="1.5"/>` +
      `<rect x="7" y="7" width="46" height="76" rx="4" fill="none" stroke="#e8b832" stroke-width="1.5"/></svg>`;
  }
  return {spanish, rank535, back, parse};
})();
