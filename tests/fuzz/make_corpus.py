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
