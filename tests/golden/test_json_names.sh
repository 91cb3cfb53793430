#!/usr/bin/env bash
# test_json_names.sh: names we do not control (link and switch names in links.csv and
# paths.csv, the trace's file name, the pcapng interface name, the folder of the CSV files)
# carry quotes, backslashes, control characters and a byte that is not UTF-8. The --json
# summary must still be JSON a strict parser takes, and the database must give every name
# back as it came in, with finding.evidence parseable JSON.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip json-names "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
if ! command -v python3 >/dev/null; then
	skip json-names "python3 not installed"
	exit 0
fi
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT

# A lossy fabric link, so that a finding with evidence (and a runner-up) names links.
if ! "$SYNTH" -q -o "$work/syn" --hosts 8 --leaves 2 --spines 2 --duration 5ms --seed 3 \
	--fault link=leaf0-spine1,kind=loss,size=1% 2>"$work/synth.err"; then
	fail json-names-synth "$(head -n 1 "$work/synth.err")"
	exit 1
fi

# Rename: every switch and link gets quotes, a backslash, control bytes and 0xff; the
# trace, its folder and the interface too. names.json records what went in (as hex).
python3 - "$work" <<'EOF' || { fail json-names-setup "python3 could not build the inputs"; exit 1; }
import csv, io, json, os, struct, sys

work = sys.argv[1].encode()
odd = b'"q\\b\x01\t\x1f\xff'		# quote, backslash, control bytes, not UTF-8

def csv_rows(path):
    with open(path, 'rb') as f:
        return [line.split(b',') for line in f.read().splitlines() if line]

def csv_field(b):
    return b'"' + b.replace(b'"', b'""') + b'"'

def switch(n):
    return n if n[:1].isdigit() or b':' in n else n + odd

links = csv_rows(work + b'/syn/links.csv')
rename = {}
for row in links[1:]:
    rename[row[0]] = row[0] + odd
    row[0], row[1], row[2] = rename[row[0]], switch(row[1]), switch(row[2])
paths = csv_rows(work + b'/syn/paths.csv')
for row in paths[1:]:
    row[3:] = [rename[l] for l in row[3:]]

topo = work + b'/to"po\\\x02\xff'
os.mkdir(topo)
for name, rows in ((b'/links.csv', links), (b'/paths.csv', paths)):
    with open(topo + name, 'wb') as f:
        for i, row in enumerate(rows):
            f.write(b','.join(row if i == 0 else [csv_field(x) for x in row]) + b'\n')

# The interface name goes into each IDB as if_name (option 2), the other options kept.
with open(work + b'/syn/trace.pcapng', 'rb') as f:
    data = f.read()
ifname = b'et"h\\0\x03\xff'
out, i = bytearray(), 0
while i < len(data):
    btype, blen = struct.unpack_from('<II', data, i)
    block = data[i:i + blen]
    if btype == 1:
        body, opts, j = block[8:16], bytearray(), 16
        while j + 4 <= blen - 4:
            code, olen = struct.unpack_from('<HH', block, j)
            if code == 0:
                break
            if code != 2:
                opts += block[j:j + 4 + (olen + 3) // 4 * 4]
            j += 4 + (olen + 3) // 4 * 4
        val = ifname + b'\0' * (-len(ifname) % 4)
        opts = struct.pack('<HH', 2, len(ifname)) + val + opts + struct.pack('<HH', 0, 0)
        nlen = 12 + len(body) + len(opts)
        block = struct.pack('<II', 1, nlen) + body + opts + struct.pack('<I', nlen)
    out += block
    i += blen
trace = work + b'/tr"a\\ce\x04\xff.pcapng'
with open(trace, 'wb') as f:
    f.write(out)
json.dump({'links': [rename[k].hex() for k in rename], 'trace': trace.hex(),
           'topology': (topo + b'/links.csv').hex(), 'paths': (topo + b'/paths.csv').hex(),
           'ifname': ifname.hex()}, open(work + b'/names.json', 'w'))
EOF

trace=$(printf '%s' "$work"/tr*.pcapng)
topo=$(printf '%s' "$work"/to*)
"$ANALYZE" -q "$trace" --window 1ms --topology "$topo/links.csv" --paths "$topo/paths.csv" \
	--json >"$work/out.json" 2>"$work/err"
expect_eq json-names-analyze-exit 0 $?
"$ANALYZE" -q "$trace" --window 1ms --topology "$topo/links.csv" --paths "$topo/paths.csv" \
	-o "$work/out.db" 2>"$work/err.db"
expect_eq json-names-db-exit 0 $?

# Each check prints its own PASS/FAIL line.
python3 - "$work" <<'EOF'
import json, sqlite3, sys

work = sys.argv[1]
names = {k: (bytes.fromhex(v) if isinstance(v, str) else [bytes.fromhex(x) for x in v])
         for k, v in json.load(open(work + '/names.json')).items()}
links = set(names['links'])

def check(name, ok, why=''):
    print(('PASS ' if ok else 'FAIL ') + name + ('' if ok else ': ' + why))

def as_json(raw):
    """Strict: UTF-8 without replacement, then JSON."""
    try:
        return json.loads(raw.decode('utf-8', 'strict')), ''
    except (UnicodeDecodeError, ValueError) as e:
        return None, str(e)[:200]

def shown(b):
    """A name as JSON must show it: invalid bytes become U+FFFD, the rest as is."""
    return b.decode('utf-8', 'replace')

doc, why = as_json(open(work + '/out.json', 'rb').read())
check('json-names-json-parses', doc is not None, why)
if doc is not None:
    findings = doc.get('findings') or []
    check('json-names-json-finding', len(findings) > 0, 'no finding')
    top = findings[0] if findings else {}
    ev = top.get('evidence') or {}
    # A set of links that fit equally names each member in evidence.subjects.
    members = ev.get('subjects') if top.get('subject_kind') == 'set' else [top.get('subject')]
    check('json-names-json-subject', bool(members) and
          all(m in {shown(l) for l in links} for m in members), 'subject %r' % top.get('subject'))
    check('json-names-json-evidence', isinstance(ev, dict) and ev.get('signal') == 'loss',
          'evidence %r' % ev)
    ru = (ev.get('runner_up') or {}).get('subject')
    check('json-names-json-runner-up', ru in {shown(l) for l in links}, 'runner_up %r' % ru)
    paths = [c.get('path') for c in doc.get('captures', [])]
    check('json-names-json-trace', paths == [shown(names['trace'])], 'paths %r' % paths)

db = sqlite3.connect(work + '/out.db')
db.text_factory = bytes
rows = db.execute('SELECT subject_kind, subject, evidence FROM finding ORDER BY rank').fetchall()
check('json-names-db-finding', len(rows) > 0, 'no finding row')
bad = [r[2][:80] for r in rows if as_json(r[2])[0] is None]
check('json-names-db-evidence-parses', not bad, 'unparsable evidence %r' % bad)
subj = [r[1] for r in rows if r[0] == b'link']
# A set's members as its evidence JSON shows them (invalid bytes as U+FFFD).
members = [m for r in rows if r[0] == b'set' and not bad
           for m in as_json(r[2])[0].get('subjects', [])]
check('json-names-db-subject', (subj or members) and all(s in links for s in subj) and
      all(m in {shown(l) for l in links} for m in members), 'subjects %r %r' % (subj, members))
ru = [as_json(r[2])[0].get('runner_up', {}).get('subject') for r in rows if not bad]
check('json-names-db-runner-up', ru and ru[0] in {shown(l) for l in links}, 'runner_up %r' % ru)
path = db.execute('SELECT path FROM capture').fetchall()
check('json-names-db-trace', path == [(names['trace'],)], 'capture.path %r' % path)
meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('topology', 'paths')"))
check('json-names-db-topology', meta.get(b'topology') == names['topology'] and
      meta.get(b'paths') == names['paths'], 'meta %r' % meta)
EOF
exit 0
