"""DataPipes (torch.utils.data.datapipes in PyTorch 1.13): composable iterable-style
(IterDataPipe) and map-style (MapDataPipe) datasets whose operations are also methods
(`dp.map(f).filter(g).batch(4)`) through the functional_datapipe registry, the decorators that
validate their types and determinism, and the graph settings DataLoader applies (sharding over
workers, switching shufflers on or off).

Element types: `class P(IterDataPipe[int])` declares what P yields; runtime_validation checks each
item against it (classes, typing.Any, Union/Optional, and the origin of List[...], Tuple[...]...;
not the inner types of containers, which torch also checks).
"""
import functools
import inspect
import typing

from ..dataset import Dataset, IterableDataset

__all__ = ['IterDataPipe', 'MapDataPipe', 'DFIterDataPipe', 'DataChunk', 'functional_datapipe',
           'argument_validation', 'runtime_validation', 'runtime_validation_disabled', 'non_deterministic',
           'guaranteed_datapipes_determinism']

T_co = typing.TypeVar('T_co', covariant=True)
_state = {'runtime_validation': True, 'determinism': False}


class _Registry:
    """The functional forms: dp.name(*args) is functions[name](dp, *args)."""

    functions = None

    def __getattr__(self, name):
        fn = type(self).functions.get(name)
        if fn is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        return functools.partial(fn, self)

    @classmethod
    def register_function(cls, function_name, function):
        cls.functions[function_name] = function

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register, enable_df_api_tracing=False):
        if function_name in cls.functions:
            raise Exception(f'Unable to add DataPipe function name {function_name} as it is already taken')
        cls.functions[function_name] = cls_to_register

    def __dir__(self):
        return list(super().__dir__()) + list(type(self).functions)

    def __repr__(self):
        return type(self).__qualname__

    __str__ = __repr__

    @classmethod
    def _element_type(cls):
        """The T of the IterDataPipe[T] the class derives from (typing.Any when undeclared)."""
        for klass in cls.__mro__:
            for base in getattr(klass, '__orig_bases__', ()):
                if typing.get_origin(base) in (IterDataPipe, MapDataPipe):
                    args = typing.get_args(base)
                    if args and not isinstance(args[0], typing.TypeVar):
                        return args[0]
        return typing.Any

    @property
    def type(self):
        return self._element_type()


class IterDataPipe(_Registry, IterableDataset, typing.Generic[T_co]):
    """An iterable-style DataPipe: subclasses define __iter__ (and __len__ when they can)."""

    functions = {}

    def reset(self):
        """Called before each new iteration by pipelines that keep state (nothing by default)."""


class DFIterDataPipe(IterDataPipe):
    """The base of DataPipes over dataframes (torch's prototype); a plain IterDataPipe otherwise."""

    def _is_dfpipe(self):
        return True


class MapDataPipe(_Registry, Dataset, typing.Generic[T_co]):
    """A map-style DataPipe: subclasses define __getitem__ and __len__."""

    functions = {}


class DataChunk(list):
    """A batch as a list (what .batch() yields)."""

    def __init__(self, items):
        super().__init__(items)
        self.items = items

    def as_str(self, indent=''):
        return indent + '[' + ', '.join(str(i) for i in iter(self)) + ']'

    def __iter__(self):
        yield from super().__iter__()

    def raw_iterator(self):
        yield from self.items


class functional_datapipe:
    """Class decorator: @functional_datapipe('name') makes the DataPipe class available as the
    method dp.name(...) of every DataPipe of its kind (iterable or map-style)."""

    def __init__(self, name, enable_df_api_tracing=False):
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        if isinstance(cls, type) and issubclass(cls, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(self.name, cls, self.enable_df_api_tracing)
        elif isinstance(cls, type) and issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        else:
            raise TypeError('`functional_datapipe` can only decorate IterDataPipe or MapDataPipe classes, '
                            f'got {cls!r}')
        return cls


# ---- determinism ----
class guaranteed_datapipes_determinism:
    """Context manager (or decorator): constructing a DataPipe marked non_deterministic inside it
    raises TypeError."""

    def __init__(self):
        self.prev = _state['determinism']
        _state['determinism'] = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state['determinism'] = self.prev


class non_deterministic:
    """Marks a DataPipe class as non-deterministic (@non_deterministic), or decides per construction
    with a function of the constructor's arguments (@non_deterministic(fn) on the class)."""

    def __init__(self, arg):
        if isinstance(arg, type):
            if not issubclass(arg, (IterDataPipe, MapDataPipe)):
                raise TypeError(f'Only `IterDataPipe` can be decorated with `non_deterministic`, but {arg.__name__} '
                                'is found')
            self.cls, self.deterministic_fn = arg, None
        elif callable(arg):
            self.cls, self.deterministic_fn = None, arg
        else:
            raise TypeError(f'{arg} can not be decorated by non_deterministic')

    def __call__(self, *args, **kwargs):
        if self.cls is not None:  # @non_deterministic on a class: this call constructs it
            if _state['determinism']:
                raise TypeError(f"{self.cls.__name__} is non-deterministic, but you set "
                                "'guaranteed_datapipes_determinism'. You can turn off determinism for this DataPipe "
                                "if that is acceptable for your application")
            return self.cls(*args, **kwargs)
        cls = args[0]  # @non_deterministic(fn) on a class
        if not (isinstance(cls, type) and issubclass(cls, (IterDataPipe, MapDataPipe))):
            raise TypeError(f'Only `IterDataPipe` can be decorated, but {getattr(cls, "__name__", cls)} is found')
        fn = self.deterministic_fn
        original_new = cls.__new__

        def new(klass, *a, **kw):
            if _state['determinism'] and fn(*a, **kw):
                raise TypeError(f"{klass.__name__} is non-deterministic with the inputs, but you set "
                                "'guaranteed_datapipes_determinism'. You can turn off determinism for this DataPipe "
                                "if that is acceptable for your application")
            return original_new(klass) if original_new is object.__new__ else original_new(klass, *a, **kw)
        cls.__new__ = new
        return cls


# ---- type validation ----
def _instance_of(value, hint):
    if hint is typing.Any or isinstance(hint, typing.TypeVar):
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        return any(_instance_of(value, h) for h in typing.get_args(hint))
    if origin is not None:
        return isinstance(value, origin)
    return isinstance(value, hint) if isinstance(hint, type) else True


def argument_validation(f):
    """Decorator (of a DataPipe's __init__): arguments annotated as IterDataPipe[...] /
    MapDataPipe[...] must be DataPipes of that kind, else TypeError."""
    signature = inspect.signature(f)
    hints = typing.get_type_hints(f)

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            hint = hints.get(name)
            kind = typing.get_origin(hint) or hint
            if isinstance(kind, type) and issubclass(kind, (IterDataPipe, MapDataPipe)):
                if not isinstance(value, kind):
                    raise TypeError(f"Expected argument '{name}' as a {kind.__name__}, but found {type(value)}")
                wanted = typing.get_args(hint)
                if wanted and not _subtype(value.type, wanted[0]):
                    raise TypeError(f"Expected type of argument '{name}' as a subtype of hint {wanted[0]}, but "
                                    f'found {value.type}')
        return f(*args, **kwargs)
    return wrapper


def _subtype(left, right):
    if right is typing.Any or left == right:
        return True
    if left is typing.Any:
        return False
    if typing.get_origin(right) is typing.Union:
        return any(_subtype(left, r) for r in typing.get_args(right))
    lo, ro = typing.get_origin(left) or left, typing.get_origin(right) or right
    return isinstance(lo, type) and isinstance(ro, type) and issubclass(lo, ro)


class runtime_validation_disabled:
    """Context manager: runtime_validation checks nothing inside it."""

    def __init__(self):
        self.prev = _state['runtime_validation']
        _state['runtime_validation'] = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state['runtime_validation'] = self.prev


def runtime_validation(f):
    """Decorator of a DataPipe's __iter__: each item must be an instance of the DataPipe's declared
    element type (IterDataPipe[T]), else RuntimeError."""
    if f.__name__ != '__iter__':
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @functools.wraps(f)
    def wrapper(self):
        hint = self.type
        for item in f(self):
            if _state['runtime_validation'] and not _instance_of(item, hint):
                raise RuntimeError(f'Expected an instance as subtype of {hint}, but found {item}({type(item)})')
            yield item
    return wrapper


# ---- graph settings (what DataLoader applies) ----
def traverse(datapipe):
    """The DataPipes of the graph that ends at datapipe (each once; sources found through the
    attributes that hold DataPipes or lists of them)."""
    seen, out, todo = set(), [], [datapipe]
    while todo:
        dp = todo.pop()
        if id(dp) in seen:
            continue
        seen.add(id(dp))
        out.append(dp)
        for value in vars(dp).values():
            for v in (value if isinstance(value, (list, tuple)) else (value,)):
                if isinstance(v, (IterDataPipe, MapDataPipe)):
                    todo.append(v)
    return out


def apply_sharding(datapipe, num_of_instances, instance_id):
    """Tells the sharding_filter DataPipes of the graph to keep shard instance_id of num_of_instances."""
    for dp in traverse(datapipe):
        if hasattr(dp, 'apply_sharding'):
            dp.apply_sharding(num_of_instances, instance_id)
    return datapipe


def apply_shuffle_settings(datapipe, shuffle=None):
    """Switches the shufflers of the graph on or off (shuffle=None leaves them)."""
    if shuffle is not None:
        for dp in traverse(datapipe):
            if hasattr(dp, 'set_shuffle'):
                dp.set_shuffle(bool(shuffle))
    return datapipe


def sharding_worker_init_fn(worker_init_fn, worker_id):
    """DataLoader's worker_init_fn for DataPipes: each worker keeps its shard, then the user's init."""
    from .._worker import get_worker_info
    info = get_worker_info()
    apply_sharding(info.dataset, info.num_workers, info.id)
    if worker_init_fn is not None:
        worker_init_fn(worker_id)
