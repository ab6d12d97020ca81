"""ember.futures: torch.futures.Future, the result of work that completes
later (Work.get_future of ember.distributed)."""

__all__ = ['Future']


class Future:
    """torch.futures.Future's interface over a pending result: wait() (blocks,
    gives the value), value() (once done), done(), then(callback) (a Future
    of callback(this future), run when waited on), add_done_callback,
    set_result / set_exception (a Future made with Future())."""

    _NONE = object()

    def __init__(self, compute=None, is_done=None):
        self._compute, self._is_done = compute, is_done
        self._value, self._exception, self._callbacks = Future._NONE, None, []

    def done(self):
        if self._value is not Future._NONE or self._exception is not None:
            return True
        return self._is_done is not None and self._is_done()

    def wait(self):
        if self._value is Future._NONE and self._exception is None:
            if self._compute is None:
                raise RuntimeError('ember.futures: Future.wait() on a Future nothing will complete '
                                   '(no set_result yet)')
            try:
                self._set(self._compute())
            except Exception as e:  # noqa: BLE001 (kept, and raised by every wait)
                self._exception = e
        if self._exception is not None:
            raise self._exception
        return self._value

    def value(self):
        if not self.done():
            raise RuntimeError('ember.futures: Future.value() before the future is done; use wait()')
        return self.wait()

    def then(self, callback):
        def compute():
            self.wait()
            return callback(self)
        return Future(compute, self.done)

    def add_done_callback(self, callback):
        if self._value is not Future._NONE:
            callback(self)
        else:
            self._callbacks.append(callback)

    def set_result(self, result):
        if self._value is not Future._NONE or self._exception is not None:
            raise RuntimeError('Future can only be marked completed once.')
        self._set(result)

    def set_exception(self, result):
        self._exception = result

    def _set(self, value):
        self._value = value
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)
