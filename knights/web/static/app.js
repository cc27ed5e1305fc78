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
const TOP_ARROWS = [ARROW_TYPE.success, ARROW_TYPE.info, ARROW_TYPE.warning]   // the bot's top three
const MATE = 100                            // knights.play.engine.MATE_SCORE, pawns
const RETRY_MS = 1500                       // how often the page asks a server that is down
const SEEN_KEPT = 64                        // knights.web.storage.MAX_SEEN
const PIECE_NAMES = {k: "king", q: "queen", r: "rook", b: "bishop", n: "knight", p: "pawn"}

let state = null        // the game as the server last sent it
let options = null      // /api/options: evaluators, default, depths
let offline = null      // while the server is down: {since, tries}
let busy = false        // a move (or the bot's) is on its way
let askedFor = null     // the position the page last asked the bot to move in (/bot)

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
        if (!next.bot_to_move) say(`The server is back: the game goes on. ${statusText()[0]}`, statusText()[1])
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
    let why = "Scores are pawns from White's side, best first for the bot; the arrows are its top three."
    if (saw.depth > 1) {
        why = `Scores are pawns from White's side, best first for the bot; the arrows are the top three. ` +
            `The search (depth ${saw.depth}) proves only the played move's score: the others' are bounds ` +
            "(it stops looking at a move once it is no better) or, when time ran out, values from a shallower " +
            "look, so a move listed above the played one is not one the search found better."
    }
    $("saw-summary").textContent = `It played ${saw.number}${saw.color === "white" ? "." : "\u2026"} ${saw.san}: ` +
        `its choice ${saw.rank + 1} of ${n} legal moves, eval ${formatScore(saw.score)}. ${why}`
    saw.candidates.forEach((c, i) => {
        const row = body.insertRow()
        row.dataset.uci = c.uci
        if (i === saw.rank) row.classList.add("played")
        if (i < TOP_ARROWS.length) row.classList.add(`top${i + 1}`)
        row.insertCell().textContent = String(i + 1)
        row.insertCell().textContent = c.san
        const score = row.insertCell()
        score.textContent = formatScore(c.score)
        score.className = "num"
        const tag = row.insertCell()
        tag.textContent = i === saw.rank ? "played" : outcomeLabel(c.outcome)
        tag.className = "tag"
    })
    saw.candidates.slice(0, TOP_ARROWS.length).reverse().forEach((c, j, top) => {
        board.addArrow(TOP_ARROWS[top.length - 1 - j], c.uci.slice(0, 2), c.uci.slice(2, 4))
    })
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

function setTypingEnabled(enabled) {
    $("move-text").disabled = !enabled
    $("play-typed").disabled = !enabled
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
            failed(error)
            return false
        }
        await show(state, false)
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
    if (!text) {
        say("Type a move first, such as e4, Nf3 or e2e4.", "illegal")
        return
    }
    if (!yourTurn()) {
        say(state && state.over ? "The game is over: start a new game." : "Wait: it is not your turn.", "illegal")
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

async function newGame(settings) {
    board.disableMoveInput()
    say(settings.color === "white" ? "Starting a new game\u2026" : "The bot is thinking\u2026", "thinking")
    try {
        const next = await api("POST", "/api/games", settings)
        await board.setOrientation(next.human === "white" ? COLOR.white : COLOR.black)
        await show(next, false)
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
        newGame(settingsFromForm())
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
