"""Writes the seed corpus of the safetensors fuzz target: a few tiny valid
files and one of each kind of malformed file. Run from the repository root:
/usr/bin/python3 tests/fuzz/make_corpus.py (the output is committed)."""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(__file__), 'corpus', 'safetensors')


def st_file(header, data=b'', pad=True, length=None):
    text = header if isinstance(header, bytes) else json.dumps(header, separators=(',', ':')).encode()
    if pad:
        text += b' ' * (-len(text) % 8)
    return struct.pack('<Q', len(text) if length is None else length) + text + data


def entry(dtype, shape, begin, end):
    return {'dtype': dtype, 'shape': shape, 'data_offsets': [begin, end]}


SEEDS = {
    'valid_empty': st_file({}),
    'valid_metadata': st_file({'__metadata__': {'format': 'pt', 'k': 'v'}}),
    'valid_two': st_file({'w': entry('F32', [2, 2], 0, 16), 'b': entry('U8', [3], 16, 19)}, bytes(19)),
    'valid_scalar_and_empty': st_file({'s': entry('F64', [], 0, 8), 'e': entry('BF16', [0, 3], 8, 8)}, bytes(8)),
    'valid_byte_dtypes': st_file({d: entry(d, [1], i, i + 1) for i, d in enumerate(['BOOL', 'U8', 'I8'])}, bytes(3)),
    'bad_header_past_eof': st_file({}, length=1000),
    'bad_not_object': st_file(b'[1,2,3]'),
    'bad_dtype': st_file({'a': entry('U16', [1], 0, 2)}, bytes(2)),
    'bad_size_mismatch': st_file({'a': entry('F32', [3], 0, 8)}, bytes(8)),
    'bad_overflow': st_file({'a': entry('F64', [2 ** 62, 2 ** 62], 0, 8)}, bytes(8)),
    'bad_overlap': st_file({'a': entry('U8', [4], 0, 4), 'b': entry('U8', [4], 2, 6)}, bytes(6)),
    'bad_gap': st_file({'a': entry('U8', [2], 0, 2), 'b': entry('U8', [2], 3, 5)}, bytes(5)),
    'bad_trailing': st_file({'a': entry('U8', [2], 0, 2)}, bytes(4)),
    'bad_duplicate': st_file(b'{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
                             b'"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', bytes(2)),
    'bad_truncated_json': st_file(b'{"a":{"dtype":"U8","sha'),
    'bad_short': b'\x05\x00\x00',
}

if __name__ == '__main__':
    os.makedirs(OUT, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(OUT, name), 'wb') as f:
            f.write(data)
    print(f'{len(SEEDS)} seeds in {OUT}')


# ---- the other readers' seeds (torch zip, legacy, pickle, IDX) -------------
# Generated with torch 1.13 and ember; run from the repository root with
# PYTHONPATH=python /usr/bin/python3 tests/fuzz/make_corpus.py.

def torch_seeds():
    import collections
    import gzip
    import io
    import pickle
    import zipfile
    import torch

    def saved(obj, **kw):
        buf = io.BytesIO()
        torch.save(obj, buf, **kw)
        return buf.getvalue()

    x = torch.arange(6.).reshape(2, 3)
    objs = {
        'tensor': x, 'views': {'x': x, 'row': x[1], 't': x.t()},
        'state_dict': torch.nn.Linear(2, 2).state_dict(),
        'param': torch.nn.Parameter(torch.ones(2)), 'dtypes': [torch.ones(2, dtype=d) for d in
                                                                (torch.float16, torch.int64, torch.bool, torch.uint8)],
        'plain': {'a': [1, 2.5, 'x', None, (True, b'by')], 'n': 2 ** 70},
    }
    zips = {k: saved(v) for k, v in objs.items()}
    legacy = {k: saved(v, _use_new_zipfile_serialization=False) for k, v in objs.items()}
    deflated = io.BytesIO()  # a deflate-compressed entry, as a re-zipping tool would write
    with zipfile.ZipFile(io.BytesIO(zips['tensor'])) as src, zipfile.ZipFile(deflated, 'w', zipfile.ZIP_DEFLATED) as dst:
        for n in src.namelist():
            dst.writestr(n, src.read(n))
    zips['deflated'] = deflated.getvalue()
    zips['truncated'] = zips['views'][:-30]
    pickles = {f'p{p}_{k}': pickle.dumps(v, protocol=p) for p in range(6)
               for k, v in [('plain', objs['plain']), ('odict', collections.OrderedDict(a=[1], b={2: 3})),
                            ('set', {1, 2}), ('frozen', frozenset([3])), ('nested', [[[[]]]]), ('bytearray', bytearray(b'ab'))]}
    pickles['reduce_system'] = b"cos\nsystem\n(S'true'\ntR."
    pickles['inst'] = b"(S'x'\nios\nsystem\n."
    pickles['ext1'] = b'\x80\x02\x82\x01.'
    pickles['persid'] = b'\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x02tQ.'
    idx = {'u8': b'\x00\x00\x08\x02\x00\x00\x00\x02\x00\x00\x00\x03' + bytes(range(6)),
           'f32': b'\x00\x00\x0d\x01\x00\x00\x00\x02' + b'\x3f\x80\x00\x00\x40\x00\x00\x00',
           'short': b'\x00\x00\x08\x01\x00\x00\x00\x09abc', 'huge': b'\x00\x00\x0e\x02\xff\xff\xff\xff\xff\xff\xff\xff'}
    idx['gz'] = gzip.compress(idx['u8'])
    return {'zip': zips, 'torch_legacy': legacy, 'pickle': pickles, 'idx': idx}


if __name__ == '__main__':
    for target, seeds in torch_seeds().items():
        out = os.path.join(os.path.dirname(__file__), 'corpus', target)
        os.makedirs(out, exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(out, name), 'wb') as f:
                f.write(data)
        print(f'{len(seeds)} seeds in {out}')
