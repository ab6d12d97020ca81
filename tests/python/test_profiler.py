"""ember.profiler and ember.autograd.profiler against torch 1.13's: the
events recorded (ops, backward nodes, ranges, nesting, shapes, memory,
stacks), key_averages and the table's layout, schedule/step windows,
Chrome traces, and errors."""
import json
import threading

import pytest
import torch

import ember
from ember.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def names(events):
    return [e.name for e in events]


def test_ops_ranges_and_backward_nodes():
    x = ember.randn(64, 100)
    lin = ember.nn.Linear(100, 10)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function('model_inference'):
            lin(x).relu().sum().backward()
    events = prof.events()
    top = [e for e in events if e.cpu_parent is None]
    assert names(top) == ['model_inference']
    inference = top[0]
    inner = {e.name for e in events if e is not inference}
    assert {'addmm', 'relu', 'sum', 'AddmmBackward0', 'ReluBackward0', 'SumBackward0', 'threshold_backward'} <= inner
    for e in events:
        assert e.time_range.start <= e.time_range.end
        for c in e.cpu_children:
            assert c.cpu_parent is e and e.time_range.start <= c.time_range.start <= c.time_range.end <= \
                e.time_range.end
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total + 1e-9
    addmm = next(e for e in events if e.name == 'addmm')
    assert addmm.input_shapes == [[64, 100], [100, 10], [10]]
    # the backward node's children are the ops of its formula
    relu_node = next(e for e in events if e.name == 'ReluBackward0')
    assert 'threshold_backward' in names(relu_node.cpu_children)


def test_key_averages_and_table_layout():
    a = ember.ones(1000)
    with profile(record_shapes=True) as prof:
        for _ in range(3):
            a = a + 1
        a.mul(2)
    avg = {e.key: e for e in prof.key_averages()}
    assert avg['add'].count == 3 and avg['mul'].count == 1
    assert avg['add'].cpu_time == pytest.approx(avg['add'].cpu_time_total / 3)
    table = prof.key_averages().table(sort_by='self_cpu_time_total', row_limit=10)
    lines = table.splitlines()
    # the same columns, in the same order, as torch 1.13's table
    with torch.profiler.profile() as tprof:
        torch.ones(3) + 1
    theader = tprof.key_averages().table(row_limit=1).splitlines()[1].split()
    assert lines[1].split() == theader
    assert lines[0] == lines[2] and set(lines[0]) == {'-', ' '}
    assert lines[-1].startswith('Self CPU time total:')
    assert any(line.split()[0] == 'add' and line.split()[-1] == '3' for line in lines[3:-2])
    shaped = prof.key_averages(group_by_input_shape=True).table(row_limit=3).splitlines()
    assert shaped[1].split()[-2:] == ['Input', 'Shapes']


def test_profile_memory_charges_outputs_to_their_op():
    with profile(profile_memory=True) as prof:
        b = ember.ones(1000) + 1
        del b
    add = next(e for e in prof.events() if e.name == 'add')
    assert add.self_cpu_memory_usage == 4000 and add.cpu_memory_usage == 4000
    table = prof.key_averages().table()
    assert 'CPU Mem' in table.splitlines()[1] and '3.91 Kb' in table


def test_with_stack_and_export_stacks(tmp_path):
    with profile(with_stack=True) as prof:
        ember.ones(3) * 2
    mul = next(e for e in prof.events() if e.name == 'mul')
    assert any('test_profiler.py' in frame for frame in mul.stack)
    prof.export_stacks(tmp_path / 'stacks.txt')
    lines = (tmp_path / 'stacks.txt').read_text().splitlines()
    assert any(line.rsplit(' ', 1)[0].endswith(';mul') for line in lines)
    with profile() as plain:
        ember.ones(1)
    with pytest.raises(RuntimeError, match='with_stack'):
        plain.export_stacks(tmp_path / 'x.txt')


def test_chrome_trace(tmp_path):
    with profile(record_shapes=True) as prof:
        with record_function('block'):
            ember.ones(4, 4).matmul(ember.ones(4, 4))
    prof.export_chrome_trace(str(tmp_path / 'trace.json'))
    trace = json.loads((tmp_path / 'trace.json').read_text())
    spans = [e for e in trace['traceEvents'] if e['ph'] == 'X']
    by_name = {e['name']: e for e in spans}
    assert {'block', 'mm'} <= set(by_name)
    block, mm = by_name['block'], by_name['mm']
    assert block['cat'] == 'user_annotation' and mm['cat'] == 'cpu_op'
    assert block['ts'] <= mm['ts'] and mm['ts'] + mm['dur'] <= block['ts'] + block['dur'] + 1e-3
    assert mm['args']['Input Dims'] == [[4, 4], [4, 4]]
    assert all(isinstance(e['tid'], int) and e['dur'] >= 0 for e in spans)


@pytest.mark.parametrize('args', [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=2, active=1, repeat=2),
                                  dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3)])
def test_schedule_matches_torch(args):
    ours, theirs = schedule(**args), torch.profiler.schedule(**args)
    assert [ours(s).name for s in range(20)] == [theirs(s).name for s in range(20)]


def test_schedule_windows_and_on_trace_ready():
    windows = []
    sched = schedule(wait=1, warmup=1, active=2, repeat=2)
    with profile(schedule=sched, on_trace_ready=lambda p: windows.append(p.events())) as prof:
        for step in range(10):
            ember.full((2,), float(step)).neg()
            prof.step()
    assert len(windows) == 2
    for k, events in enumerate(windows):
        steps = sorted(e.name for e in events if e.name.startswith('ProfilerStep#'))
        assert steps == [f'ProfilerStep#{4 * k + 2}', f'ProfilerStep#{4 * k + 3}']
        assert names(events).count('neg') == 2
        for e in events:
            if e.name == 'neg':
                assert e.cpu_parent.name.startswith('ProfilerStep#')


def test_tensorboard_trace_handler(tmp_path):
    handler = ember.profiler.tensorboard_trace_handler(str(tmp_path), worker_name='w0')
    with profile(on_trace_ready=handler):
        ember.ones(2) + 1
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].name.startswith('w0.') and files[0].name.endswith('.pt.trace.json')
    assert json.loads(files[0].read_text())['traceEvents']


def test_threads_get_their_own_track():
    def work():
        ember.ones(5).exp()
    with profile() as prof:
        ember.ones(5).sin()
        t = threading.Thread(target=work)
        t.start()
        t.join()
    by_name = {e.name: e for e in prof.events()}
    assert by_name['sin'].thread != by_name['exp'].thread


def test_off_records_nothing_and_errors():
    with record_function('no profiler'):  # a no-op without a profiler
        ember.ones(2) + 1
    with profile() as prof:
        with pytest.raises(RuntimeError, match='already running'):
            with profile():
                pass
    assert 'add' not in names(prof.events())
    with pytest.raises(TypeError):
        record_function(3)
    fresh = profile()
    with pytest.raises(RuntimeError):
        fresh.events()
    with pytest.warns(UserWarning, match='CUDA'):
        profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    assert ember.profiler.supported_activities() == {ProfilerActivity.CPU}
    assert ProfilerAction.RECORD_AND_SAVE.name == 'RECORD_AND_SAVE'


def test_record_function_decorator():
    @record_function('helper')
    def helper(x):
        return x * 3
    with profile() as prof:
        helper(ember.ones(2))
    h = next(e for e in prof.events() if e.name == 'helper')
    assert names(h.cpu_children) == ['mul']


def test_legacy_autograd_profiler():
    x = ember.randn(8, 8, requires_grad=True)
    with ember.autograd.profiler.profile(record_shapes=True, profile_memory=True) as prof:
        with ember.autograd.profiler.record_function('fwd'):
            (x @ x).sum().backward()
    assert {'fwd', 'mm', 'MmBackward0'} <= set(names(prof.function_events))
    assert 'Self CPU time total' in prof.table(sort_by='cpu_time_total')
    assert prof.key_averages().table().splitlines()[1].split()[:3] == ['Name', 'Self', 'CPU']
    with ember.autograd.profiler.profile(enabled=False) as off:
        x * 2
    with pytest.raises(RuntimeError):
        off.key_averages()
