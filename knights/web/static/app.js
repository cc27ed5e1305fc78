// Knights and Kernels in the browser: the glue between the board (cm-chessboard) and the
// server's JSON API (knights/web/app.py). The server holds the game and knows the rules
// (python-chess): the page draws its state, offers the legal moves it lists, and shows
// what the bot saw. Each tab keeps its own game id in sessionStorage.

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

let state = null        // the game as the server last sent it
let options = null      // /api/options: evaluators, default, depths

const board = new Chessboard($("board"), {
    assetsUrl: "/vendor/cm-chessboard/assets/",
    style: {borderType: BORDER_TYPE.frame, animationDuration: 180},
    extensions: [{class: Markers}, {class: Arrows}, {class: PromotionDialog}],
})

// -- talking to the server ---------------------------------------------------------------
async function api(method, path, body) {
    const init = {method, headers: {Accept: "application/json"}}
    if (body !== undefined) {
        init.headers["Content-Type"] = "application/json"
        init.body = JSON.stringify(body)
    }
    const response = await fetch(path, init)
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

// -- scores ------------------------------------------------------------------------------
function formatScore(score, digits = 2) {
    if (Math.abs(score) >= MATE) return (score > 0 ? "+" : "\u2212") + (digits < 2 ? "M" : "mate")
    return (score >= 0 ? "+" : "\u2212") + Math.abs(score).toFixed(digits)
}

// White's share of the bar for a score in pawns (a logistic curve: +1 is about 59%).
function whiteShare(score) {
    return 1 / (1 + Math.exp(-0.368 * Math.max(-MATE, Math.min(MATE, score))))
}

function outcomeLabel(outcome) {
    if (!outcome) return ""
    return outcome === "checkmate" ? "mate" : "draw"
}

// -- drawing the game --------------------------------------------------------------------
function humanColor() {
    return state.human === "white" ? COLOR.white : COLOR.black
}

function drawMoves() {
    const list = $("moves")
    list.replaceChildren()
    for (let i = 0; i < state.san.length; i += 2) {
        const item = document.createElement("li")
        item.textContent = state.san.slice(i, i + 2).join("  ")
        list.appendChild(item)
    }
    list.scrollTop = list.scrollHeight
}

function drawEvalBar(score) {
    const share = score === null ? 0.5 : whiteShare(score)
    $("evalbar-white").style.height = `${(share * 100).toFixed(1)}%`
    $("evalbar-text").textContent = score === null ? "0.0" : formatScore(score, 1)
    $("evalbar").classList.toggle("flipped", board.getOrientation() === COLOR.black)
}


function drawSaw(saw) {
    const body = $("saw").tBodies[0]
    body.replaceChildren()
    board.removeArrows()
    if (!saw) {
        $("saw-summary").textContent = "The bot has not moved yet."
        drawEvalBar(null)
        return
    }
    const n = saw.candidates.length
    $("saw-summary").textContent = `It played ${saw.number}${saw.color === "white" ? "." : "\u2026"} ${saw.san}: its choice ${saw.rank + 1} of ${n} ` +
        `legal moves, eval ${formatScore(saw.score)}. Scores are pawns from White's side, best first for the bot; ` +
        "the arrows are its top three."
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

function statusText() {
    if (state.over) {
        const who = {"1-0": "White wins", "0-1": "Black wins"}[state.result] || "Draw"
        return [`Game over: ${state.reason}. ${who} (${state.result}).`, "over"]
    }
    if (state.turn !== state.human) return ["The bot is to move.", "thinking"]
    return [`Your move (${state.human})${state.check ? ": you are in check" : ""}.`, "your-move"]
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
    drawSaw(state.saw)
    drawMoves()
    $("fen").value = state.fen
    $("pgn").href = `/api/games/${state.id}/pgn`
    $("undo").disabled = !state.can_undo
    $("resign").disabled = state.over
    say(...statusText())
    allowInput()
}

function allowInput() {
    board.disableMoveInput()
    if (state && !state.over && state.turn === state.human) board.enableMoveInput(onInput, humanColor())
}

// -- the person's moves --------------------------------------------------------------------
function legalFrom(square) {
    return state.legal.filter((m) => m.startsWith(square))
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
                board.showPromotionDialog(event.squareTo, humanColor(), (result) => {
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

async function play(uci) {
    board.disableMoveInput()
    say("The bot is thinking\u2026", "thinking")
    try {
        await show(await api("POST", `/api/games/${state.id}/move`, {move: uci}))
    } catch (error) {
        await show(state, false)
        say(error.message, error.status === 422 ? "illegal" : "error")
    }
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

function formFromSettings(settings) {
    $("evaluator").value = settings.evaluator
    $("depth").value = String(settings.depth)
    $("movetime").value = settings.movetime === null ? "" : String(settings.movetime)
    $("stochastic").checked = settings.stochastic
    $("color").value = state.human
}

async function newGame(settings) {
    board.disableMoveInput()
    say(settings.color === "white" ? "Starting a new game\u2026" : "The bot is thinking\u2026", "thinking")
    try {
        const next = await api("POST", "/api/games", settings)
        await board.setOrientation(next.human === "white" ? COLOR.white : COLOR.black)
        await show(next, false)
    } catch (error) {
        say(error.message, "error")
        allowInput()
    }
}

async function button(path) {
    try {
        await show(await api("POST", `/api/games/${state.id}/${path}`), false)
    } catch (error) {
        say(error.message, "error")
    }
}

function fillOptions() {
    const evaluators = $("evaluator")
    for (const name of options.evaluators) evaluators.add(new Option(name, name, false, name === options.default_evaluator))
    const depths = $("depth")
    for (const depth of options.depths) {
        const label = depth === 1 ? "1 (one ply: the bot)" : `${depth}${options.search_available ? "" : " (search not here yet)"}`
        const option = new Option(label, String(depth), depth === 1, depth === 1)
        option.disabled = depth > 1 && !options.search_available
        depths.add(option)
    }
    $("movetime").max = String(options.max_movetime)
}

async function start() {
    options = await api("GET", "/api/options")
    fillOptions()
    $("new-game").addEventListener("submit", (event) => {
        event.preventDefault()
        newGame(settingsFromForm())
    })
    $("flip").addEventListener("click", async () => {
        await board.setOrientation(board.getOrientation() === COLOR.white ? COLOR.black : COLOR.white)
        drawEvalBar(state && state.saw ? state.saw.score : null)
    })
    $("undo").addEventListener("click", () => button("undo"))
    $("resign").addEventListener("click", () => button("resign"))
    const saved = sessionStorage.getItem(GAME_KEY)
    if (saved) {
        try {
            const next = await api("GET", `/api/games/${encodeURIComponent(saved)}`)
            await board.setOrientation(next.human === "white" ? COLOR.white : COLOR.black)
            await show(next, false)
            formFromSettings(state.settings)
            return
        } catch {
            sessionStorage.removeItem(GAME_KEY)   // the server forgot it (restarted): start afresh
        }
    }
    await newGame(settingsFromForm())
}

start().catch((error) => say(`The page could not start: ${error.message}`, "error"))
