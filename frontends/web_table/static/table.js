// The practice table: talks to the JSON API of rummy_env.frontends.web (see its docstring).
// Every move is sent to the server as an action text; the server's answer (or its
// refusal, with the engine's reason) is shown. No build step: plain ES2017.
"use strict";

const SUIT = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const RANKS = "A23456789TJQK";
const params = new URLSearchParams(location.search);
const DELAY = Math.max(0, Number(params.get("delay") ?? 700)); // ms between the computer's moves

let session = null;   // the server's session id
let view = null;      // the last view shown
let busy = false;     // a request or the computer's moves are being shown
// selected cards of the hand, by position in view.hand (two decks hold two copies of a card)
const selected = new Set();
let handKey = "";     // the hand the selection belongs to

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// a card text: "7H", a joker "JK" (in a hand) or "JK=7H" (in a meld: the card it stands for)
function natural(c) { return c.includes("=") ? c.split("=")[1] : c; }
function baseCard(c) { return c.includes("=") ? c.split("=")[0] : c; }
function cardLabel(c) {
  if (c === "JK") return "\u2605";  // a joker in hand: a star
  const n = natural(c);
  return (c.includes("=") ? "\u2605" : "") + (n[0] === "T" ? "10" : n[0]) + SUIT[n[1]];
}
function rankOf(c) { return RANKS.indexOf(natural(c)[0]); }

function cardEl(c, tag = "div", copy = 1) {
  const el = document.createElement(tag);
  const n = natural(c);
  el.className = "card" + (n[1] === "H" || n[1] === "D" ? " red" : "") + (c.startsWith("JK") ? " joker" : "")
    + (copy > 1 ? " copy" : "");
  el.dataset.card = c;
  el.textContent = cardLabel(c) + (copy > 1 ? "\u2032" : "");  // the second copy of a card is primed
  el.title = c === "JK" ? "a joker (wild)" : c.startsWith("JK=") ? `a joker standing for ${n}`
    : copy > 1 ? `${c} (the second copy)` : c;
  if (tag === "button") el.type = "button";
  return el;
}
function selectedCards() { return [...selected].sort((a, b) => a - b).map((i) => view.hand[i]); }

function showMessage(text, isError) {
  const m = $("message");
  m.textContent = text || "";
  m.className = isError && text ? "error" : "";
}

async function api(path, body) {
  const opts = body === undefined ? { method: "GET" }
    : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
  const r = await fetch(path, opts);
  let data = null;
  try { data = await r.json(); } catch (e) { data = { detail: `the server answered ${r.status} without JSON` }; }
  if (!r.ok) throw new Error(data && data.detail ? data.detail : `HTTP ${r.status}`);
  return data;
}

function legalOf(kind) { return (view && view.legal || []).filter((a) => a.kind === kind); }
function isLegal(text) { return (view && view.legal || []).some((a) => a.action === text); }
function myPlay() { return view && view.to_move === "you" && view.phase === "play"; }

// ------------------------------------------------------------------ rendering
function render(v, frame) {
  // the first view ends the loading state (index.html: #table.loading)
  $("table").classList.remove("loading");
  $("table").removeAttribute("aria-busy");
  view = v;
  const key = v.hand.join(" ");
  if (key !== handKey) { selected.clear(); handKey = key; }  // another hand: nothing stays selected
  $("score-you").textContent = v.scores.you;
  $("score-computer").textContent = v.scores.computer;
  $("target").textContent = v.target ? `match to ${v.target}` : "one hand";
  $("title").textContent = v.title ? `Practice: ${v.title}.` : "";
  $("handinfo").textContent = `Hand ${v.hand_number}, turn ${v.turn}.`;
  $("opponent-name").textContent = `Opponent: ${v.agent}.`;
  $("agent-note").hidden = !v.agent_note;
  $("agent-note").textContent = v.agent_note ? `Note: ${v.agent_note}.` : "";
  const mp = v.meld_points;  // 500 Rum: points melded and laid off this hand
  $("meld-points").hidden = !mp;
  if (mp) { $("mp-you").textContent = mp.you; $("mp-computer").textContent = mp.computer; }

  $("opp-count").textContent = v.opponent_hand_size;
  const opp = $("opp-cards");
  opp.replaceChildren();
  for (let i = 0; i < v.opponent_hand_size; i++) { const b = document.createElement("div"); b.className = "card back"; opp.appendChild(b); }

  $("stock-count").textContent = v.stock_size;
  $("stock").classList.toggle("legal", isLegal("draw stock"));
  $("stock").classList.toggle("empty", v.stock_size === 0);
  const up = $("upcard");
  up.className = "card";
  up.textContent = "";
  up.dataset.card = v.upcard || "";
  if (v.upcard) {
    up.textContent = cardLabel(v.upcard);
    if (v.upcard[1] === "H" || v.upcard[1] === "D") up.classList.add("red");
  } else up.classList.add("empty");
  up.classList.toggle("legal", isLegal("draw discard"));
  $("discard-count").textContent = v.discard_size ? `(pile ${v.discard_size})` : "";
  renderPile(v);

  const melds = $("melds");
  melds.replaceChildren();
  v.melds.forEach((m, i) => {
    const d = document.createElement("div");
    d.className = "meld";
    d.dataset.index = i;
    d.title = `a ${m.kind}: select one card of your hand, then click here to lay it off`;
    for (const c of m.cards) d.appendChild(cardEl(c));  // a run in order, round the corner too
    d.addEventListener("click", () => onMeldClick(i));
    melds.appendChild(d);
  });

  const hand = $("hand");
  hand.replaceChildren();
  const seen = {};
  v.hand.forEach((c, i) => {
    seen[c] = (seen[c] || 0) + 1;
    const b = cardEl(c, "button", seen[c]);
    b.dataset.index = i;
    if (selected.has(i)) b.classList.add("selected");
    b.addEventListener("click", () => onCardClick(i));
    b.addEventListener("dblclick", () => send(`discard ${c}`));
    hand.appendChild(b);
  });
  $("hand-count").textContent = `(${v.hand.length} card${v.hand.length === 1 ? "" : "s"})`;
  markTargets();

  const st = $("status");
  if (v.hand_over) st.textContent = "The hand is over.";
  else if (v.to_move === "computer") st.textContent = frame && frame.who === "computer" ? `Computer: ${frame.action}` : "The computer is thinking\u2026";
  else if (v.phase === "draw") st.textContent = v.dig ? "Your turn: draw from the stock, or take cards of the discard pile."
    : "Your turn: draw from the stock or take the upcard.";
  else {
    let t = "Meld, lay off, or discard one card to end your turn.";
    if (v.drawn_from_discard) t += ` (You took ${cardLabel(v.drawn_from_discard)} from the discard pile: you may not discard it this turn.)`;
    st.textContent = t;
  }
  const bound = $("bound-note");
  bound.hidden = !v.bound;
  bound.textContent = v.bound ? `You dug ${cardLabel(v.bound)} from the discard pile: meld it or lay it off this turn `
    + "(no discard until it is on the table)." : "";

  const log = $("log");
  log.replaceChildren();
  for (const e of v.log.slice(-14)) {
    const li = document.createElement("li");
    li.className = e.who;
    li.textContent = `${e.who === "you" ? "You" : "Computer"}: ${e.action}`;
    log.appendChild(li);
  }
  log.scrollTop = log.scrollHeight;

  const legal = $("legal");
  legal.replaceChildren();
  for (const a of v.legal) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = a.action;
    b.dataset.action = a.action;
    b.addEventListener("click", () => send(a.action));
    legal.appendChild(b);
  }
  if (!v.legal.length) legal.textContent = v.hand_over ? "none: the hand is over" : "none: wait for the computer";

  const res = $("result");
  res.hidden = !v.hand_over;
  if (v.hand_over) {
    $("result-text").textContent = resultText(v);
    $("next-btn").hidden = v.match_over;
  }
  updateButtons();
}

// 500 Rum (draw "dig"): the whole discard pile, bottom to top; a click digs that card
// with every card above it (the top card alone is the plain draw).
function renderPile(v) {
  const dig = Boolean(v.dig && v.pile);
  $("pile-area").hidden = !dig;
  $("upcard-area").hidden = dig;
  $("dig-hint").hidden = !dig;
  const pile = $("pile");
  pile.replaceChildren();
  if (!dig) return;
  $("pile-count").textContent = v.pile.length;
  v.pile.forEach((c, i) => {
    const top = i === v.pile.length - 1;
    const action = top ? "draw discard" : `draw discard ${c}`;
    const b = cardEl(c, "button");
    b.dataset.depth = v.pile.length - 1 - i;  // cards above it
    b.title = top ? `take the upcard ${c}` : `dig: take ${c} and the ${v.pile.length - 1 - i} card(s) above it`;
    b.classList.toggle("legal", isLegal(action));
    b.addEventListener("click", () => onPileClick(c, top));
    pile.appendChild(b);
  });
  if (!v.pile.length) pile.textContent = "(empty)";
}

function onPileClick(c, top) {
  // a card that may not be dug now is asked for anyway, so the engine says why (nothing changes)
  return send(top ? "draw discard" : `draw discard ${c}`);
}

function meldsResultText(v) {
  const r = v.result;
  let t = r.outcome === "out" ? (r.winner === "you" ? "You went out." : "The computer went out.")
    : r.outcome === "dry" ? "The stock ran out: the hand ends." : `The hand ends (${r.outcome}).`;
  const seat = (who, name) => `${name} melded ${r.melded[who]} and held ${r.held[who]}: ${r.points[who]} point${Math.abs(r.points[who]) === 1 ? "" : "s"}`;
  t += ` This hand: ${seat("you", "you")}; ${seat("computer", "the computer")}.`;
  return t;
}

function resultText(v) {
  const r = v.result;
  let t;
  if (r.melded) t = meldsResultText(v);  // 500 Rum: every seat scores its melds minus its hand
  else if (r.outcome === "out") {
    const who = r.winner === "you" ? "You went out" : "The computer went out";
    const pts = r.points[r.winner];
    t = `${who}${r.rummy ? " (rummy!)" : ""}: ${r.winner === "you" ? "you score" : "it scores"} ${pts} point${pts === 1 ? "" : "s"}.`;
  } else if (r.winner) {
    t = `The stock ran out (${r.outcome}): ${r.winner === "you" ? "you score" : "the computer scores"} ${r.points[r.winner]} points.`;
  } else t = `The hand ends without points (${r.outcome}).`;
  t += ` Score: you ${v.scores.you}, computer ${v.scores.computer}.`;
  if (v.match_over) {
    const w = v.match_winners;
    t += w.length > 1 ? " The match is drawn." : w[0] === "you" ? " You win the match!" : " The computer wins the match.";
  }
  return t;
}

function markTargets() {
  const one = selected.size === 1 ? selectedCards()[0] : null;
  const targets = new Set(legalOf("layoff").filter((a) => baseCard(a.cards[0]) === one).map((a) => a.meld));
  document.querySelectorAll("#melds .meld").forEach((d) => d.classList.toggle("target", targets.has(Number(d.dataset.index))));
  document.querySelectorAll("#hand .card").forEach((b) => b.classList.toggle("selected", selected.has(Number(b.dataset.index))));
}

function updateButtons() {
  const mine = view && view.to_move === "you" && !busy;
  $("meld-btn").disabled = !mine || selected.size < 3;
  $("discard-btn").disabled = !mine || selected.size !== 1;
  $("clear-btn").disabled = selected.size === 0;
  $("next-btn").disabled = busy;
  markTargets();
}

// ------------------------------------------------------------------ actions
async function show(answer) {
  session = answer.session;
  const frames = answer.frames;
  for (let i = 0; i < frames.length; i++) {
    render(frames[i].view, frames[i]);
    if (i < frames.length - 1) await sleep(DELAY);  // the moves one at a time
  }
  busy = false;  // the person may act as soon as the final table is shown
  render(answer.view);
}

async function request(fn) {
  if (busy) { showMessage("Wait: the computer is still playing.", true); return; }
  busy = true;
  updateButtons();
  try {
    const answer = await fn();
    showMessage("");
    await show(answer);
  } catch (e) {
    showMessage(e.message, true);
  } finally {
    busy = false;
    updateButtons();
  }
}

function send(action) {
  if (!session) { showMessage("Start a match first.", true); return; }
  return request(async () => {
    const a = await api(`/api/game/${encodeURIComponent(session)}/move`, { action });
    selected.clear();
    return a;
  });
}

function onCardClick(i) {
  if (selected.has(i)) selected.delete(i); else selected.add(i);
  showMessage("");
  updateButtons();
}

function onMeldClick(i) {
  if (selected.size !== 1) {
    showMessage("To lay off, select exactly one card of your hand, then click the meld it should go on.", true);
    return;
  }
  const c = selectedCards()[0];
  const fit = legalOf("layoff").filter((a) => baseCard(a.cards[0]) === c && a.meld === i);
  if (fit.length === 1) return send(fit[0].action);
  if (fit.length > 1) return choose(fit, "The joker can stand for more than one card there");
  // not a legal lay-off: ask anyway, so the engine says why
  const m = view.melds[i];
  let end = "set";
  if (m.kind === "run") end = rankOf(c) < rankOf(m.cards[0]) ? "low" : "high";
  return send(`layoff ${c} ${end}`);
}

function startMatch() {
  const preset = $("preset").value || undefined;
  return request(() => api("/api/new", preset ? { rules: preset } : {}));
}

function loadPosition(body) {
  selected.clear();
  return request(() => api("/api/position", body));
}

$("stock").addEventListener("click", () => send("draw stock"));
$("upcard").addEventListener("click", () => send("draw discard"));
// the legal melds of exactly the selected cards (a joker's place told by "JK=<card>")
function meldsOf(cards) {
  const want = [...cards].sort().join(" ");
  return legalOf("meld").filter((a) => a.cards.map(baseCard).sort().join(" ") === want);
}

// several legal moves for one selection (a joker that can stand for more than one card):
// the moves are marked in the list of legal moves for the person to pick
function choose(moves, why) {
  const texts = new Set(moves.map((a) => a.action));
  document.querySelectorAll("#legal button").forEach((b) => b.classList.toggle("choice", texts.has(b.dataset.action)));
  showMessage(`${why}: pick one of the marked moves (${moves.map((a) => a.action).join(", ")}).`, false);
}

$("meld-btn").addEventListener("click", () => {
  const cards = selectedCards();
  const fit = meldsOf(cards);
  if (fit.length === 1) return send(fit[0].action);
  if (fit.length > 1) return choose(fit, "The joker can stand for more than one card in this meld");
  return send("meld " + cards.join(" "));  // not a legal meld: asked anyway, so the engine says why
});
$("discard-btn").addEventListener("click", () => {
  if (selected.size !== 1) { showMessage("Select exactly one card to discard.", true); return; }
  return send(`discard ${selectedCards()[0]}`);
});
$("clear-btn").addEventListener("click", () => { selected.clear(); updateButtons(); });
$("new-btn").addEventListener("click", startMatch);
$("next-btn").addEventListener("click", () => request(() => api(`/api/game/${encodeURIComponent(session)}/next`, {})));
$("load-state-btn").addEventListener("click", () => {
  let obj;
  try { obj = JSON.parse($("state-text").value); } catch (e) { showMessage(`That is not JSON: ${e.message}`, true); return; }
  // a practice-position file ({"title", "teaches", "state"}) or a bare STATE
  const state = obj && typeof obj === "object" && "state" in obj && !("hands" in obj) ? obj.state : obj;
  return loadPosition({ state });
});

async function init() {
  try {
    const cfg = await api("/api/config");
    const sel = $("preset");
    const def = typeof cfg.rules === "string" ? cfg.rules : null;
    if (!def) { const o = document.createElement("option"); o.value = ""; o.textContent = "server default"; sel.appendChild(o); }
    for (const p of cfg.presets) {
      const o = document.createElement("option");
      o.value = p; o.textContent = p; if (p === def) o.selected = true;
      sel.appendChild(o);
    }
    const ul = $("positions");
    for (const p of cfg.positions) {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button"; b.textContent = p.title; b.dataset.name = p.name;
      b.addEventListener("click", () => loadPosition({ name: p.name }));
      li.appendChild(b);
      li.appendChild(document.createTextNode(" " + p.teaches));
      ul.appendChild(li);
    }
  } catch (e) {
    $("loading").textContent = `The table did not load: ${e.message}`;
    showMessage(e.message, true);
    return;
  }
  await startMatch();
  if ($("table").classList.contains("loading")) $("loading").textContent = "No deal arrived: press New match.";
  document.body.dataset.ready = "1";
}
init();
