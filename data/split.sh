#!/usr/bin/env bash
# split.sh: split a CSSLab chess CSV into chunks that each start with the header.
#
# Usage:
#   data/split.sh [--cut] [--force] INPUT.csv OUTDIR [PREFIX] [LINES] [SUFFIX_LEN]
#
#   PREFIX      chunk name prefix                    (default: Chess_Jan_)
#   LINES       body rows per chunk, header excluded (default: 100000)
#   SUFFIX_LEN  letters in the chunk suffix, as split -a (default: 2: aa, ab, ...)
#   --cut       keep only the 11 columns the original kept (white_elo, black_elo,
#               move, cp, cp_rel, cp_loss, is_blunder_cp, white_active, is_capture,
#               board, is_check); the input must have the 47 CSSLab columns.
#               Same as CUT=1 in the environment.
#   --force     replace chunks with PREFIX already in OUTDIR (all of them, so old
#               and new chunks never mix). Same as FORCE=1 in the environment.
#
# Example (what the original project did):
#   data/split.sh --cut lichess_db_2019-01.csv data/chunks Chess_Jan_ 100000
#   -> data/chunks/Chess_Jan_aa, Chess_Jan_ab, ... (no extension), each with the
#      header line on top and at most 100000 rows under it.
#
# The input is streamed (multi-GB files are fine). CRLF line ends are turned into
# LF, a missing final newline is tolerated (the last row is kept), entirely blank
# lines are dropped. Chunks are written into a temporary directory next to OUTDIR
# and moved into OUTDIR only once all of them are complete; on any failure or
# interrupt the temporary directory is removed and OUTDIR is left untouched.
set -euo pipefail

me=$(basename -- "$0")

usage() {
    sed -n '4,16s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

die() {
    printf '%s: %s\n' "$me" "$*" >&2
    exit 1
}

# The 47 CSSLab columns (knights/data/csslab.py COLUMNS) and the 11 kept by --cut
# (KEPT_FIELDS 6,7,15,16,17,18,19,25,29,35,41).
CSSLAB_COLUMNS=(
    game_id type result white_player black_player white_elo
    black_elo time_control num_ply termination white_won
    black_won no_winner move_ply move cp cp_rel
    cp_loss is_blunder_cp winrate winrate_elo winrate_loss
    is_blunder_wr opp_winrate white_active active_elo
    opponent_elo active_won is_capture clock opp_clock
    clock_percent opp_clock_percent low_time board
    active_bishop_count active_knight_count active_pawn_count
    active_queen_count active_rook_count is_check
    num_legal_moves opp_bishop_count opp_knight_count
    opp_pawn_count opp_queen_count opp_rook_count
)
KEPT_COLUMNS=(
    white_elo black_elo move cp cp_rel cp_loss is_blunder_cp
    white_active is_capture board is_check
)

# ---------------------------------------------------------------- arguments
cut=0
force=0
case "${CUT:-0}" in 1|true|yes) cut=1 ;; esac
case "${FORCE:-0}" in 1|true|yes) force=1 ;; esac

positional=()
while (($#)); do
    case "$1" in
        --cut) cut=1 ;;
        --force) force=1 ;;
        -h|--help) usage; exit 0 ;;
        --) shift; positional+=("$@"); break ;;
        -[0-9]*) positional+=("$1") ;;   # a negative LINES: rejected below
        -?*) usage >&2; die "unknown option: $1" ;;
        *) positional+=("$1") ;;
    esac
    shift
done

if ((${#positional[@]} < 2 || ${#positional[@]} > 5)); then
    usage >&2
    exit 2
fi

input=${positional[0]}
outdir=${positional[1]}
prefix=${positional[2]-Chess_Jan_}
lines=${positional[3]-100000}
suffix_len=${positional[4]-2}

[[ $lines =~ ^[0-9]{1,15}$ ]] && ((10#$lines > 0)) \
    || die "$input: LINES must be a positive whole number, got '$lines'"
lines=$((10#$lines))
[[ $suffix_len =~ ^[0-9]{1,2}$ ]] && ((10#$suffix_len > 0)) \
    || die "$input: SUFFIX_LEN must be a positive whole number, got '$suffix_len'"
suffix_len=$((10#$suffix_len))
[[ -n $prefix && $prefix != */* ]] \
    || die "$input: PREFIX must be non-empty and contain no '/', got '$prefix'"

# ---------------------------------------------------------------- input checks
[[ -e $input ]] || die "$input: no such file"
[[ -f $input ]] || die "$input: not a regular file"
[[ -r $input ]] || die "$input: not readable (permission denied)"
[[ -s $input ]] || die "$input: empty file (no header, no rows)"

header=
IFS= read -r header <"$input" || true   # no newline at all: header-only file
header=${header%$'\r'}
header=${header#$'\xef\xbb\xbf'}        # a UTF-8 byte order mark, if any
[[ -n ${header//[[:space:]]/} ]] || die "$input: the first line (header) is blank"

commas=${header//[^,]/}
header_fields=$(( ${#commas} + 1 ))

# Every name in the header must be a CSSLab column, board and cp among them (what the chunk
# reader needs): a file without its header line would otherwise make its first row the header
# of every chunk.
declare -A known=()
for name in "${CSSLAB_COLUMNS[@]}"; do known[$name]=1; done
IFS=, read -r -a names <<<"$header,"     # trailing comma keeps a trailing empty name
for name in "${names[@]}"; do
    [[ -n $name && -n ${known[$name]+x} ]] && continue
    quoted=${name:0:40}
    ((${#name} <= 40)) || quoted+=...
    die "$input: the first line is not a CSSLab header: '$quoted' is not one of the" \
        "${#CSSLAB_COLUMNS[@]} column names (knights/data/csslab.py); is the header line missing?"
done
for name in board cp; do
    [[ ",$header," == *",$name,"* ]] \
        || die "$input: the header has no '$name' column, which every chunk needs"
done

fields=""        # comma-separated field numbers for --cut, empty: keep all
out_header=$header
if ((cut)); then
    IFS=, read -r -a names <<<"$header,"   # trailing comma keeps a trailing empty name
    declare -A index=()
    for i in "${!names[@]}"; do
        name=${names[$i]}
        [[ -n $name ]] || continue
        [[ -z ${index[$name]+x} ]] || die "$input: column '$name' appears twice in the header; cannot --cut"
        index[$name]=$((i + 1))
    done
    missing=()
    for name in "${CSSLAB_COLUMNS[@]}"; do
        [[ -n ${index[$name]+x} ]] || missing+=("$name")
    done
    if ((${#missing[@]} || header_fields != ${#CSSLAB_COLUMNS[@]})); then
        detail="$header_fields columns"
        if ((${#missing[@]})); then
            detail+="; missing ${#missing[@]}: ${missing[*]:0:5}"
            ((${#missing[@]} <= 5)) || detail+=" ..."
        fi
        die "$input: header is not the ${#CSSLAB_COLUMNS[@]}-column CSSLab header" \
            "($detail); cannot --cut (leave out --cut to keep all columns)"
    fi
    for name in "${KEPT_COLUMNS[@]}"; do
        fields+=${fields:+,}${index[$name]}
    done
    out_header=$(IFS=,; printf '%s' "${KEPT_COLUMNS[*]}")
fi

# ---------------------------------------------------------------- output checks
while [[ $outdir == */ && $outdir != / ]]; do outdir=${outdir%/}; done
[[ ! -e $outdir || -d $outdir ]] || die "$input: OUTDIR '$outdir' exists and is not a directory"

existing=()
if [[ -d $outdir ]]; then
    shopt -s nullglob
    for f in "$outdir/$prefix"*; do
        rest=${f#"$outdir/$prefix"}
        [[ $rest =~ ^[a-z]+$ && -f $f ]] && existing+=("$f")
    done
    shopt -u nullglob
    if ((${#existing[@]})) && ((!force)); then
        die "$input: OUTDIR '$outdir' already holds ${#existing[@]} chunk file(s) named" \
            "'$prefix*' (e.g. ${existing[0]##*/}); refusing to mix old and new chunks" \
            "(use --force to replace them, or another PREFIX/OUTDIR)"
    fi
fi

parent=$(dirname -- "$outdir")
mkdir -p -- "$parent" || die "$input: cannot create '$parent'"
tmp=""
cleanup() {
    if [[ -n $tmp && -d $tmp ]]; then rm -rf -- "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
tmp=$(mktemp -d "$parent/.${outdir##*/}.split.XXXXXX") \
    || die "$input: cannot create a temporary directory in '$parent'"
mkdir -- "$tmp/chunks"

# ---------------------------------------------------------------- split
# awk: skip the header, strip a CR at line end, drop blank lines, optionally keep
# only the --cut fields (checking each row has the header's field count), count
# rows. Its output always ends in a newline, even when the input's last line
# does not. split then writes the header and each block of LINES rows per chunk.
export SPLIT_HEADER=$out_header
set +e
LC_ALL=C awk -F, -v OFS=, -v fields="$fields" -v nf="$header_fields" \
    -v file="$input" -v countfile="$tmp/rows" '
    BEGIN { n = split(fields, f, ","); bad = 0; rows = 0 }
    NR == 1 { next }
    {
        sub(/\r$/, "")
        if ($0 == "") next
        if (n) {
            if (NF != nf) {
                printf "split.sh: %s: line %d has %d fields, the header has %d; cannot --cut\n", \
                    file, NR, NF, nf > "/dev/stderr"
                bad = 1
                exit 1
            }
            line = $(f[1])
            for (i = 2; i <= n; i++) line = line OFS $(f[i])
            print line
        } else {
            print
        }
        rows++
    }
    END { if (!bad) print rows > countfile }
    ' "$input" \
| LC_ALL=C SHELL=/bin/sh split -l "$lines" -a "$suffix_len" \
    --filter='{ printf "%s\n" "$SPLIT_HEADER" && cat; } > "$FILE"' \
    - "$tmp/chunks/$prefix" 2>"$tmp/split.err"
status=("${PIPESTATUS[@]}")
set -e

if ((status[1] != 0)); then
    if grep -q 'exhausted' "$tmp/split.err"; then
        die "$input: too many chunks: SUFFIX_LEN $suffix_len allows 26^$suffix_len chunks of" \
            "$lines rows; use a larger SUFFIX_LEN or LINES"
    fi
    cat "$tmp/split.err" >&2
    die "$input: split failed (exit ${status[1]})"
fi
if ((status[0] != 0)); then
    die "$input: reading or filtering the rows failed (exit ${status[0]})"
fi

rows=$(<"$tmp/rows")
((rows > 0)) || die "$input: has a header but no rows"

shopt -s nullglob
chunks=("$tmp/chunks/$prefix"*)
shopt -u nullglob
nchunks=${#chunks[@]}
((nchunks == (rows + lines - 1) / lines)) \
    || die "$input: expected $(((rows + lines - 1) / lines)) chunks, split wrote $nchunks"

# ---------------------------------------------------------------- publish
if [[ -d $outdir ]]; then
    if ((${#existing[@]})); then
        rm -f -- "${existing[@]}"
    fi
    mv -f -- "${chunks[@]}" "$outdir/"
else
    chmod "$(printf '%o' $((0777 & ~$(umask))))" "$tmp/chunks"
    mv -- "$tmp/chunks" "$outdir"
fi

first=${chunks[0]##*/}
last=${chunks[nchunks - 1]##*/}
replaced=""
((${#existing[@]})) && replaced=" (replaced ${#existing[@]} old chunk(s))"
printf '%s: %d rows -> %d chunks (%s..%s) in %s%s\n' \
    "$me" "$rows" "$nchunks" "$first" "$last" "$outdir" "$replaced"
