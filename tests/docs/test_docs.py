"""Checks that the code the README and docs/c_api.md show is real and runs.

- A fenced block after `<!-- file: PATH -->` must be PATH's whole text, and
  after `<!-- excerpt: PATH -->` a verbatim piece of it.
- The README's examples (examples/quickstart.c, .py) and the C API guide's
  worked example (examples/train_classifier.c) are run.
- Every other ```c block of docs/c_api.md is compiled (-Werror) against
  build/libember.so and run: as it is if it has a main, else as the body of
  main with <ember/ember.h> and <stdio.h>; it must exit 0.
Run from the repository root after `make`; prints "N passed, N failed".
"""
import os
import re
import subprocess
import sys
import tempfile

DOCS = ['README.md', 'docs/c_api.md']
RUN_C = ['build/examples/quickstart', 'build/examples/train_classifier']
RUN_PY = ['examples/quickstart.py']
CFLAGS = ['-std=gnu11', '-Wall', '-Wextra', '-Werror', '-Iinclude']
PRELUDE = '#include <ember/ember.h>\n#include <stdio.h>\n\nint main(void)\n{\n'

passed = failed = 0


def report(ok, what, detail=''):
    global passed, failed
    if ok:
        passed += 1
        print(f'ok: {what}')
    else:
        failed += 1
        print(f'FAILED: {what}\n{detail[-3000:]}')


def blocks(path):
    """(marker kind, marker path, language, code, line) for each fenced block."""
    text = open(path).read()
    pat = re.compile(r'(?:<!-- (file|excerpt): (\S+) -->\n)?^```(\w*)\n(.*?)^```$', re.M | re.S)
    for m in pat.finditer(text):
        yield m.group(1), m.group(2), m.group(3), m.group(4), text.count('\n', 0, m.start(3)) + 1


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300, **kw)
    return p.returncode == 0, p.stdout


with tempfile.TemporaryDirectory() as tmp:
    # build/libember.so has the soname libember.so.0: give the loader that name.
    os.symlink(os.path.abspath('build/libember.so'), os.path.join(tmp, 'libember.so.0'))
    for doc in DOCS:
        for kind, ref, lang, code, line in blocks(doc):
            where = f'{doc}:{line}'
            if kind:
                try:
                    src = open(ref).read()
                except OSError as e:
                    report(False, f'{where}: {kind} of {ref}', str(e))
                    continue
                ok = code == src if kind == 'file' else code in src
                report(ok, f'{where}: the block is {"the whole of" if kind == "file" else "a piece of"} {ref}',
                       f'--- block:\n{code}')
            elif lang == 'c' and doc == 'docs/c_api.md':
                src = code if re.search(r'\bint main\(', code) else PRELUDE + code + '    return 0;\n}\n'
                c = os.path.join(tmp, f'snippet_{line}.c')
                exe = c[:-2]
                open(c, 'w').write(src)
                ok, out = run(['cc', *CFLAGS, '-o', exe, c, 'build/libember.so',
                               '-Wl,-rpath,' + tmp])
                if ok:
                    ok, out = run([exe])
                report(ok, f'{where}: the C snippet compiles and runs', f'{out}\n--- source:\n{src}')
    for exe in RUN_C:
        ok, out = run([exe]) if os.path.exists(exe) else (False, f'{exe} is not built (make)')
        report(ok, f'{exe} runs', out)
    env = dict(os.environ, PYTHONPATH='python')
    for script in RUN_PY:
        ok, out = run([sys.executable, script], env=env)
        report(ok, f'{script} runs', out)

print(f'{passed} passed, {failed} failed')
sys.exit(1 if failed else 0)
