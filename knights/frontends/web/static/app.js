// Knights and Kernels in the browser: the glue between the board (cm-chessboard) and the
// server's JSON API (knights/web/app.py). The server holds the game and knows the rules
// (python-chess): the page draws its state, offers the legal moves it lists, and shows
// what the bot saw. Each tab keeps its own game id in sessionStorage; the server keeps the
// game itself in its database, so when the server stops the page says so, retries, and
// goes on with the same game when it is back.

import {BORDER_TYPE, COLOR, Chessboard, INPUT_EVENT_TYPE} from "/vendor/cm-chessboard/src/Chessboard.js"
import {MARKER_TYPE, Markers} from "/vendor/cm-chessboard/src/extensions/markers/Markers.js"
import {ARROW_TYPE, Arrows} from "/vendor/cm-chessboard/src/extensions/arrows/Arrows.js"
import {PromotionDialog} from "/vendor/cm-chessboard/src/extensions/promotion-dialog/PromotionDialog.js"

const $ = (id) => document.getElementById(id)
const GAME_KEY = "knights-game-id"          // per tab: sessionStorage is not shared between tabs
const HINT = MARKER_TYPE.dot                // where the picked-up piece may go
const LAST = MARKER_TYPE.square             // the last move's squares
const CHECK = MARKER_TYPE.circleDanger      // a king in check
const PLAYED_ARROW = ARROW_TYPE.success      // the bot's move (green)
const REPLY_ARROW = ARROW_TYPE.danger         // after a search: the reply it expects (red)
const RIVAL_ARROWS = [ARROW_TYPE.info, ARROW_TYPE.warning]   // at one ply: the best two others (blue, orange)
const MATE = 100                            // knights.play.engine.MATE_SCORE, pawns
const RETRY_MS = 1500                       // how often the page asks a server that is down
const SEEN_KEPT = 64                        // knights.web.storage.MAX_SEEN
const PIECE_NAMES = {k: "king", q: "queen", r: "rook", b: "bishop", n: "knight", p: "pawn"}

let state = null        // the game as the server last sent it
let options = null      // /api/options: evaluators, default, depths
let offline = null      // while the server is down: {since, tries}
let busy = false        // a move (or the bot's) is on its way
let askedFor = null     // the position the page last asked the bot to move in (/bot)
let unplayed = null     // a move the server did not get (it was down): said again when it is back

const board = new Chessboard($("board"), {
    assetsUrl: "/vendor/cm-chessboard/assets/",
    style: {borderType: BORDER_TYPE.frame, animationDuration: 180},
    extensions: [{class: Markers}, {class: Arrows}, {class: PromotionDialog}],
})

// -- talking to the server ---------------------------------------------------------------
// A failed fetch (nothing answered) or a gateway's 502-504 means the server is down: the
// caller hands it to serverDown(), which retries until it answers.
class ServerDown extends Error {}

async function api(method, path, body) {
    const init = {method, headers: {Accept: "application/json"}}
    if (body !== undefined) {
        init.headers["Content-Type"] = "application/json"
        init.body = JSON.stringify(body)
    }
    let response
    try {
        response = await fetch(path, init)
    } catch {
        throw new ServerDown("the server is not answering")
    }
    if ([502, 503, 504].includes(response.status) && !response.headers.get("Content-Type")?.includes("json")) {
        throw new ServerDown(`the server answered ${response.status}`)
    }
    let data
    try {
        data = await response.json()
    } catch {
        data = {error: `the server answered ${response.status} ${response.statusText}`}
    }
    if (!response.ok) {
        const error = new Error(data.error || `the server answered ${response.status}`)
        error.status = response.status
        throw error
    }
    return data
}

function say(text, phase) {
    const status = $("status")
    status.textContent = text
    status.dataset.phase = phase
}

// What a failed request says: the server is down (retry until it is back), or its reason.
function failed(error, phase = "error") {
    if (error instanceof ServerDown) {
        serverDown()
        return
    }
    say(error.message, phase)
}

// -- the server is down: say so, retry, and go on when it is back ---------------------------
function serverDown() {
    board.disableMoveInput()
    setTypingEnabled(false)
    if (offline) return
    offline = {since: Date.now(), tries: 0}
    const banner = $("connection")
    banner.hidden = false
    banner.textContent = "The server is not answering: it has stopped or is restarting. " +
        "Your game is kept on the server; this page tries again every few seconds and goes on when it is back."
    say("Waiting for the server\u2026", "offline")
    setTimeout(retry, RETRY_MS)
}

async function retry() {
    offline.tries += 1
    const seconds = Math.round((Date.now() - offline.since) / 1000)
    $("connection").textContent = `The server is not answering (for ${seconds} s now, ${offline.tries} ` +
        `tr${offline.tries === 1 ? "y" : "ies"}): it has stopped or is restarting. Your game is kept on the ` +
        "server; this page tries again every few seconds and goes on when it is back."
    try {
        if (!options) options = await api("GET", "/api/options")
        const next = state ? await api("GET", `/api/games/${encodeURIComponent(state.id)}`) : null
        offline = null
        $("connection").hidden = true
        if (!next) {                      // it was down when the page opened: start as usual
            await start()
            return
        }
        await show(next, false)
        if (unplayed && yourTurn()) {
            say(`The server is back, but your move ${unplayed} was not played: play it again.`, "your-move")
            if ($("move-text").value.trim() === unplayed) $("move-text").focus()
        } else if (!next.bot_to_move) {
            say(`The server is back: the game goes on. ${statusText()[0]}`, statusText()[1])
        }
        unplayed = null
    } catch (error) {
        if (error instanceof ServerDown) {
            setTimeout(retry, RETRY_MS)
            return
        }
        offline = null
        $("connection").hidden = true
        say(`The server is back, but: ${error.message}`, "error")
    }
}

// -- scores ------------------------------------------------------------------------------
function formatScore(score, digits = 2) {
    if (Math.abs(score) >= MATE) return (score > 0 ? "+" : "\u2212") + (digits < 2 ? "M" : "mate")
    return (score >= 0 ? "+" : "\u2212") + Math.abs(score).toFixed(digits)
}

// The bar's label: at most four characters, so "+10.3" never shows as "+10.".
function barLabel(score) {
    if (Math.abs(score) >= MATE) return (score > 0 ? "+" : "\u2212") + "M"
    const sign = score >= 0 ? "+" : "\u2212"
    return sign + (Math.abs(score) >= 9.95 ? Math.round(Math.abs(score)).toString() : Math.abs(score).toFixed(1))
}

// White's share of the bar for a score in pawns (a logistic curve: +1 is about 59%).
function whiteShare(score) {
    return 1 / (1 + Math.exp(-0.368 * Math.max(-MATE, Math.min(MATE, score))))
}

function outcomeLabel(outcome) {
    if (!outcome) return ""
    return outcome === "checkmate" ? "mate" : "draw"
}

// -- what is being played ----------------------------------------------------------------------
function opponentName(settings) {
    if (settings.depth <= 1) return `the one-ply bot (${settings.evaluator})`
    const time = settings.movetime === null ? "" : `, ${settings.movetime} s a move`
    return `the search, depth ${settings.depth} (${settings.evaluator}${time})`
}

function drawHeader() {
    const name = opponentName(state.settings)
    $("subtitle").textContent = `Play ${name}, and see every move it weighed before it moved.`
    document.title = `Knights and Kernels: play ${name.replace(/ \(.*\)$/, "")}`
}

// -- drawing the game --------------------------------------------------------------------
function humanColor() {
    return state.human === "white" ? COLOR.white : COLOR.black
}

// One numbered row a move: "12.  Nf3  Nc6"; the list scrolls, the last move kept in view.
function drawMoves() {
    const list = $("moves")
    list.replaceChildren()
    let last = null
    for (let i = 0; i < state.san.length; i += 2) {
        const item = document.createElement("li")
        const number = document.createElement("span")
        number.className = "num"
        number.textContent = `${i / 2 + 1}.`
        item.appendChild(number)
        for (const san of state.san.slice(i, i + 2)) {
            const move = document.createElement("span")
            move.className = "san"
            move.textContent = san
            item.appendChild(move)
            last = move
        }
        list.appendChild(item)
    }
    if (last) {
        last.classList.add("last")
        list.scrollTop = list.scrollHeight
    }
}

function drawEvalBar(score) {
    const share = score === null ? 0.5 : whiteShare(score)
    $("evalbar-white").style.height = `${(share * 100).toFixed(1)}%`
    $("evalbar-text").textContent = score === null ? "0.0" : barLabel(score)
    $("evalbar").classList.toggle("flipped", board.getOrientation() === COLOR.black)
}

// "35. Rxd5 exd5 36. Kf1": the moves of a line, numbered, from the ply after the bot's move.
function lineText(saw, moves) {
    let number = saw.number + (saw.color === "black" ? 1 : 0)
    let white = saw.color === "black"
    return moves.map((move, i) => {
        const text = white ? `${number}. ${move.san}` : (i === 0 ? `${number}\u2026 ${move.san}` : move.san)
        if (!white) number += 1
        white = !white
        return text
    }).join(" ")
}

// What decided the bot's move, in words and arrows. At one ply: the scores, its move the best
// (or, in the opening, one of the best few), the next two drawn beside it. After a search: the
// search's choice and the line it expects, its move and the expected reply drawn; the others'
// scores are no proof, so the list keeps the engine's order, the played move first.
function drawSaw(saw) {
    const body = $("saw").tBodies[0]
    body.replaceChildren()
    board.removeArrows()
    if (!saw) {
        $("saw-summary").textContent = state && state.bot_moves > 0
            ? `What the bot saw at its move ${state.bot_moves} is no longer kept (the server keeps its last ${SEEN_KEPT}).`
            : "The bot has not moved yet."
        drawEvalBar(null)
        return
    }
    const n = saw.candidates.length
    const searched = saw.searched ?? saw.depth > 1           // a game stored before these fields
    const line = saw.line ?? [{uci: saw.uci, san: saw.san}]
    const played = `${saw.number}${saw.color === "white" ? "." : "\u2026"} ${saw.san}`
    const rivals = searched ? [] : saw.candidates.map((c, i) => i).filter((i) => i !== saw.rank).slice(0, 2)
    let text
    if (searched) {
        const expects = line.length > 1 ? `; it expects ${lineText(saw, line.slice(1))}` : ""
        const drawn = saw.rank > 0 ? ` Its choice ${saw.rank + 1} of ${n}: in the opening it draws among the ` +
            "moves the search valued close to its best." : ""
        text = `It played ${played} (eval ${formatScore(saw.score)}), the move the search chose; it completed ` +
            `depth ${saw.depth}${expects}.${drawn} Its move heads the list; the others keep the last score the ` +
            "search gave them: a bound (it stops on a move once it is no better) or a shallower look's, so a " +
            "better score further down is not a move the search found better. Arrows: green its move" +
            `${line.length > 1 ? ", red the reply it expects" : ""}. Scores are pawns from White's side.`
    } else {
        const choice = saw.rank === 0
            ? `the best of its ${n} legal moves by one-ply evaluation`
            : `its choice ${saw.rank + 1} of ${n} legal moves (in the opening it draws among the best few)`
        text = `It played ${played}: ${choice}, eval ${formatScore(saw.score)}. Scores are pawns from White's ` +
            "side, the bot's best first. Arrows: green its move" +
            ["", ", blue the", ", blue and orange the"][rivals.length] +
            (rivals.length ? ` ${saw.rank === 0 ? "next best" : "best"} ${rivals.length === 1 ? "other" : "two others"}.` : ".")
    }
    $("saw-summary").textContent = text
    saw.candidates.forEach((c, i) => {
        const row = body.insertRow()
        row.dataset.uci = c.uci
        if (i === saw.rank) row.classList.add("played")
        const rival = rivals.indexOf(i)
        if (rival >= 0) row.classList.add(`rival${rival + 1}`)
        row.insertCell().textContent = String(i + 1)
        row.insertCell().textContent = c.san
        const score = row.insertCell()
        score.textContent = formatScore(c.score)
        score.className = "num"
        const tag = row.insertCell()
        tag.textContent = i === saw.rank ? "played" : outcomeLabel(c.outcome)
        tag.className = "tag"
    })
    const arrow = (type, uci) => board.addArrow(type, uci.slice(0, 2), uci.slice(2, 4))
    rivals.slice().reverse().forEach((i) => arrow(RIVAL_ARROWS[rivals.indexOf(i)], saw.candidates[i].uci))
    if (line.length > 1) arrow(REPLY_ARROW, line[1].uci)
    arrow(PLAYED_ARROW, saw.uci)                              // drawn last: on top
    drawEvalBar(saw.score)
}

// The board's accessible name: whose side you play, the pieces, the last move.
function describeBoard() {
    const pieces = {w: [], b: []}
    for (const [name, square] of board.getPosition() ? piecesOnBoard() : []) pieces[name[0]].push(`${PIECE_NAMES[name[1]]} ${square}`)
    const last = state.san.length ? ` Last move: ${state.san[state.san.length - 1]}.` : ""
    return `Chessboard: you play ${state.human}, ${state.turn} to move.${last} ` +
        `White: ${pieces.w.join(", ") || "none"}. Black: ${pieces.b.join(", ") || "none"}.`
}

function piecesOnBoard() {
    const found = []
    for (const file of "abcdefgh") {
        for (const rank of "12345678") {
            const piece = board.getPiece(file + rank)
            if (piece) found.push([piece, file + rank])
        }
    }
    const order = "kqrbnp"
    return found.sort((a, b) => order.indexOf(a[0][1]) - order.indexOf(b[0][1]))
}

function labelBoard() {
    const svg = $("board").querySelector("svg")
    if (svg) svg.setAttribute("aria-label", describeBoard())
}

function result() {
    if (state.result === "1/2-1/2") return "Draw"
    const whiteWon = state.result === "1-0"
    return whiteWon === (state.human === "white") ? "You win" : "You lose"
}

function statusText() {
    if (state.over) {
        const reason = /resigns$/.test(state.reason) ? "you resigned" : state.reason
        return [`Game over: ${reason}. ${result()} (${state.result}).`, "over"]
    }
    if (state.turn !== state.human) return ["The bot is to move.", "thinking"]
    return [`Your move (${state.human})${state.check ? ": you are in check" : ""}.`, "your-move"]
}

// What the live region says after the bot's move: the move itself, then where the game stands.
function botMoveText() {
    const saw = state.saw
    if (!saw || saw.ply !== state.moves.length - 1) return ""
    return `The bot played ${saw.number}${saw.color === "white" ? "." : "\u2026"} ${state.san[saw.ply]}. `
}

async function show(next, animate = true) {
    state = next
    sessionStorage.setItem(GAME_KEY, state.id)
    board.removeMarkers()
    await board.setPosition(state.fen, animate)
    if (state.last_move) {
        board.addMarker(LAST, state.last_move.slice(0, 2))
        board.addMarker(LAST, state.last_move.slice(2, 4))
    }
    if (state.check) board.addMarker(CHECK, state.check)
    drawHeader()
    drawSaw(state.saw)
    drawMoves()
    labelBoard()
    $("fen").value = state.fen
    $("pgn").href = `/api/games/${state.id}/pgn`
    $("undo").disabled = !state.can_undo
    $("resign").disabled = state.over
    const [text, phase] = statusText()
    say(botMoveText() + text, phase)
    allowInput()
    if (state.bot_to_move && !busy) {                 // its search was cut short (a restart): ask again,
        if (askedFor === state.fen) {                  // once a position
            say("The bot has not moved yet: reload the page to ask it again.", "error")
            return
        }
        askedFor = state.fen
        await botMove()
    }
}

function yourTurn() {
    return state && !offline && !busy && !state.over && state.turn === state.human
}

// The move box is never disabled, only read-only while it is not your move: it stays the
// page's first stop for the Tab key, and Enter there says why nothing is played.
function setTypingEnabled(enabled) {
    $("move-text").readOnly = !enabled
    for (const id of ["move-text", "play-typed"]) $(id).setAttribute("aria-disabled", String(!enabled))
}

function allowInput() {
    board.disableMoveInput()
    setTypingEnabled(yourTurn())
    if (yourTurn()) board.enableMoveInput(onInput, humanColor())
}

// -- the person's moves --------------------------------------------------------------------
function legalFrom(square) {
    return state.legal.filter((m) => m.startsWith(square))
}

// The promotion dialog is in the accessibility tree only while it is open (the library
// keeps its empty group, a modal dialog, in the board's SVG all the time).
function promotionDialogOpen(open) {
    const group = $("board").querySelector(".promotion-dialog-group")
    const svg = $("board").querySelector("svg")
    if (group) {
        if (open) group.removeAttribute("aria-hidden")
        else group.setAttribute("aria-hidden", "true")
    }
    if (svg) svg.setAttribute("role", open ? "group" : "img")   // an image's children are not read
}

function onInput(event) {
    switch (event.type) {
        case INPUT_EVENT_TYPE.moveInputStarted: {
            board.removeMarkers(HINT)
            const moves = legalFrom(event.squareFrom)
            if (!moves.length) {
                say(`The piece on ${event.squareFrom} has no legal move.`, "illegal")
                return false
            }
            for (const m of moves) board.addMarker(HINT, m.slice(2, 4))
            return true
        }
        case INPUT_EVENT_TYPE.validateMoveInput: {
            board.removeMarkers(HINT)
            const uci = event.squareFrom + event.squareTo
            const moves = state.legal.filter((m) => m.startsWith(uci))
            if (!moves.length) {
                const target = event.squareTo && board.getPiece(event.squareTo)
                if (!(target && target[0] === state.human[0])) {   // a click on another own piece re-selects
                    say(`Illegal move ${event.squareFrom}-${event.squareTo || "?"}: not allowed here.`, "illegal")
                }
                return false
            }
            if (moves.length > 1) {   // a promotion: ask for the piece
                promotionDialogOpen(true)
                board.showPromotionDialog(event.squareTo, humanColor(), (result) => {
                    promotionDialogOpen(false)
                    if (result && result.piece) play(uci + result.piece.charAt(1))
                    else show(state, false)   // canceled: the pawn goes back
                })
                return true
            }
            play(uci)
            return true
        }
        case INPUT_EVENT_TYPE.moveInputCanceled:
            board.removeMarkers(HINT)
            break
    }
}

async function play(move) {
    board.disableMoveInput()
    busy = true
    setTypingEnabled(false)
    say("The bot is thinking\u2026", "thinking")
    try {
        const next = await api("POST", `/api/games/${state.id}/move`, {move})
        busy = false
        await show(next)
        return true
    } catch (error) {
        busy = false
        if (error instanceof ServerDown) {
            await board.setPosition(state.fen, false)       // a moved piece goes back: nothing was played
            failed(error)
            unplayed = move
            say(`Your move ${move} was not played: the server is not answering. This page tries again and ` +
                "says when it is back; then play it again.", "offline")
            return false
        }
        let shown = state
        if (error.status === 503) {       // the server could not save: show what it holds
            try {
                shown = await api("GET", `/api/games/${encodeURIComponent(state.id)}`)
            } catch { /* keep the last state */ }
        }
        await show(shown, false)
        say(error.message, error.status === 422 ? "illegal" : "error")
        return false
    } finally {
        busy = false
    }
}

// The bot's move when the server says it is still to move (a restart cut its search short).
async function botMove() {
    busy = true
    board.disableMoveInput()
    setTypingEnabled(false)
    say("The bot is thinking\u2026", "thinking")
    try {
        const next = await api("POST", `/api/games/${state.id}/bot`)
        busy = false
        await show(next)
    } catch (error) {
        busy = false
        failed(error)
    }
}

async function playTyped(event) {
    event.preventDefault()
    const input = $("move-text")
    const text = input.value.trim()
    if (offline) {
        say(`${text ? `Your move ${text} was not played` : "Nothing can be played now"}: the server is not ` +
            "answering. This page tries again and says when it is back; then play it again.", "offline")
        unplayed = text || unplayed
        return
    }
    if (!yourTurn()) {
        say(state && state.over ? "The game is over: start a new game." : "Wait: it is not your turn.", "illegal")
        return
    }
    if (!text) {
        say("Type a move first, such as e4, Nf3 or e2e4.", "illegal")
        return
    }
    if (await play(text)) input.value = ""
    input.focus()
}

// -- the buttons and the new-game form -------------------------------------------------------
function settingsFromForm() {
    const movetime = $("movetime").value.trim()
    return {
        color: $("color").value,
        evaluator: $("evaluator").value,
        depth: Number($("depth").value),
        movetime: movetime === "" ? null : Number(movetime),
        stochastic: $("stochastic").checked,
    }
}

function formFromSettings(settings, human) {
    $("evaluator").value = settings.evaluator
    $("depth").value = String(settings.depth)
    $("movetime").value = settings.movetime === null ? "" : String(settings.movetime)
    $("stochastic").checked = settings.stochastic
    $("color").value = human
}

// A new game; ``chosen``: the person asked for it (the form), so the keyboard goes on in the move
// box, not at the New game button, from which the Tab key went round the whole page to reach it
// (not on a touch screen, where a focused box would open the keyboard over the board).
async function newGame(settings, chosen = false) {
    board.disableMoveInput()
    say(settings.color === "white" ? "Starting a new game\u2026" : "The bot is thinking\u2026", "thinking")
    try {
        const next = await api("POST", "/api/games", settings)
        await board.setOrientation(next.human === "white" ? COLOR.white : COLOR.black)
        await show(next, false)
        if (chosen && yourTurn() && matchMedia("(pointer: fine)").matches) $("move-text").focus()
    } catch (error) {
        failed(error)
        if (state && !offline) allowInput()
    }
}

async function button(path) {
    try {
        await show(await api("POST", `/api/games/${state.id}/${path}`), false)
    } catch (error) {
        failed(error)
    }
}

// The PGN through fetch, so that a refusal or a server that is down is said, not a silent
// failed download.
async function downloadPgn(event) {
    event.preventDefault()
    if (!state) return
    let response
    try {
        response = await fetch(`/api/games/${state.id}/pgn`)
    } catch {
        serverDown()
        say("No PGN: the server is not answering. The game is kept there; try again when the server is back.",
            "offline")
        return
    }
    if (!response.ok) {
        let why = `the server answered ${response.status}`
        try {
            why = (await response.json()).error || why
        } catch { /* not JSON: keep the status */ }
        say(`No PGN: ${why}`, "error")
        return
    }
    const url = URL.createObjectURL(await response.blob())
    const link = document.createElement("a")
    link.href = url
    link.download = `knights-${state.id}.pgn`
    document.body.appendChild(link)
    link.click()
    link.remove()
    setTimeout(() => URL.revokeObjectURL(url), 10_000)
    say(`The PGN is downloaded (knights-${state.id}.pgn). ${statusText()[0]}`, statusText()[1])
}

function fillOptions() {
    const evaluators = $("evaluator")
    evaluators.replaceChildren()
    for (const name of options.evaluators) evaluators.add(new Option(name, name, false, name === options.default_evaluator))
    const depths = $("depth")
    depths.replaceChildren()
    const preselected = options.search_available && options.depths.includes(options.default_depth) ? options.default_depth : 1
    for (const depth of options.depths) {
        const label = depth === 1 ? "1 (one ply: the paper's bot)" : `${depth} (search)${options.search_available ? "" : " (not here yet)"}`
        const option = new Option(label, String(depth), depth === preselected, depth === preselected)
        option.disabled = depth > 1 && !options.search_available
        depths.add(option)
    }
    $("movetime").max = String(options.max_movetime)
    if (options.default_movetime) $("movetime").placeholder = `${options.default_movetime} (default)`
}

let wired = false

function wire() {
    if (wired) return
    wired = true
    $("new-game").addEventListener("submit", (event) => {
        event.preventDefault()
        newGame(settingsFromForm(), true)
    })
    $("type-move").addEventListener("submit", playTyped)
    $("flip").addEventListener("click", async () => {
        await board.setOrientation(board.getOrientation() === COLOR.white ? COLOR.black : COLOR.white)
        drawEvalBar(state && state.saw ? state.saw.score : null)
    })
    $("undo").addEventListener("click", () => button("undo"))
    $("resign").addEventListener("click", () => button("resign"))
    $("pgn").addEventListener("click", downloadPgn)
}

async function start() {
    promotionDialogOpen(false)
    setTypingEnabled(false)
    wire()
    try {
        options = await api("GET", "/api/options")
    } catch (error) {
        if (error instanceof ServerDown) {
            serverDown()
            return
        }
        throw error
    }
    fillOptions()
    const saved = sessionStorage.getItem(GAME_KEY)
    if (saved) {
        try {
            const next = await api("GET", `/api/games/${encodeURIComponent(saved)}`)
            await board.setOrientation(next.human === "white" ? COLOR.white : COLOR.black)
            formFromSettings(next.settings, next.human)
            await show(next, false)
            return
        } catch (error) {
            if (error instanceof ServerDown) {
                serverDown()
                return
            }
            sessionStorage.removeItem(GAME_KEY)   // the server no longer has it: start afresh
        }
    }
    await newGame(settingsFromForm())
}

start().catch((error) => say(`The page could not start: ${error.message}`, "error"))
