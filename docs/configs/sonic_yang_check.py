#!/usr/bin/env python3
"""A SONiC config_db.json as YANG instance data (XML), for yanglint (docs/configs/sonic.md).

    python3 sonic_yang_check.py MODELS config_db.json > db.xml
    yanglint -p MODELS MODELS/sonic-device_metadata.yang ... db.xml

MODELS: sonic-buildimage src/sonic-yang-models/yang-models/*.yang with the yang-templates/*.j2
rendered (yang_model_type=py). Each table maps to the list of its module's container whose key
count matches the config_db key's '|'-separated parts, as sonic-yang-mgmt maps them; a table of
fixed containers (DEVICE_METADATA|localhost, SWITCH_HASH|GLOBAL) maps to the container; a list
holding a list (CABLE_LENGTH) takes the fields as its entries. XML keeps every value text, so
libyang checks types, patterns, mandatory leaves and leafrefs itself."""
import glob
import json
import sys
from xml.sax.saxutils import escape


def tokens(text):
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
        elif text.startswith('/*', i):
            i = text.find('*/', i) + 2
        elif c in '{};':
            yield c
            i += 1
        elif c in '"\'':
            j, buf = i + 1, ''
            while j < n and text[j] != c:
                if text[j] == '\\' and c == '"':
                    buf += text[j:j + 2]
                    j += 2
                    continue
                buf += text[j]
                j += 1
            yield ('S', buf)
            i = j + 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in '{};':
                j += 1
            yield text[i:j]
            i = j


def statements(toks):
    stack, cur = [[]], []
    for t in toks:
        if t in ('{', ';'):
            arg = ' '.join(x[1] if isinstance(x, tuple) else x for x in cur[1:])
            node = {'kw': cur[0] if cur else None, 'arg': arg, 'ch': []}
            stack[-1].append(node)
            cur = []
            if t == '{':
                stack.append(node['ch'])
        elif t == '}':
            stack.pop()
        else:
            cur.append(t)
    return stack[0]


def child_args(node, kw):
    return [c['arg'] for c in node['ch'] if c['kw'] == kw]


tables = {}  # table -> [(namespace, top container, lists, fixed containers)]
for path in glob.glob(sys.argv[1] + '/*.yang'):
    for mod in statements(tokens(open(path).read())):
        if mod['kw'] != 'module':
            continue
        ns = child_args(mod, 'namespace')[0]
        for top in (c for c in mod['ch'] if c['kw'] == 'container'):
            for tab in (c for c in top['ch'] if c['kw'] == 'container'):
                lists = []
                for lst in (c for c in tab['ch'] if c['kw'] == 'list'):
                    keys = (child_args(lst, 'key') or [''])[0].split()
                    inner = next((c for c in lst['ch'] if c['kw'] == 'list'), None)
                    if inner:
                        ik = child_args(inner, 'key')[0]
                        iv = next(a for a in child_args(inner, 'leaf') if a != ik)
                        lists.append((lst['arg'], keys, set(), (inner['arg'], ik, iv)))
                    else:
                        lists.append((lst['arg'], keys, set(child_args(lst, 'leaf-list')), None))
                fixed = child_args(tab, 'container')
                if lists or fixed:
                    tables.setdefault(tab['arg'], []).append((ns, top['arg'], lists, fixed))


def leaves(fields, leaflists=()):
    out = ''
    for k, v in fields.items():
        if isinstance(v, list):
            out += ''.join(f'<{k}>{escape(x)}</{k}>' for x in v)
        elif k in leaflists:
            out += ''.join(f'<{k}>{escape(x)}</{k}>' for x in v.split(','))
        else:
            out += f'<{k}>{escape(v)}</{k}>'
    return out


db = json.load(open(sys.argv[2]))
trees = {}
for table, rows in db.items():
    if table not in tables:
        sys.exit(f'no YANG model holds table {table}')
    ns, top, lists, fixed = tables[table][0]
    body = ''
    for key, fields in rows.items():
        parts = key.split('|')
        lst = next((l for l in lists if len(l[1]) == len(parts)), None)
        if lst is None:
            if key not in fixed:
                sys.exit(f'{table}|{key}: no list of {len(parts)} keys, no container {key}')
            body += f'<{key}>{leaves(fields)}</{key}>'
            continue
        name, keys, leaflists, inner = lst
        x = ''.join(f'<{k}>{escape(p)}</{k}>' for k, p in zip(keys, parts))
        if inner:
            il, ik, iv = inner
            x += ''.join(f'<{il}><{ik}>{escape(k)}</{ik}><{iv}>{escape(v)}</{iv}></{il}>'
                         for k, v in fields.items())
        else:
            x += leaves(fields, leaflists)
        body += f'<{name}>{x}</{name}>'
    trees.setdefault((ns, top), '')
    trees[(ns, top)] += f'<{table}>{body}</{table}>'
for (ns, top), inner in trees.items():
    print(f'<{top} xmlns="{ns}">{inner}</{top}>')
