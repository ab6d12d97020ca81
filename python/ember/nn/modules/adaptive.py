"""AdaptiveLogSoftmaxWithLoss (torch.nn's, after Grave et al., "Efficient softmax approximation for
GPUs"): frequent classes in a head softmax, rare ones in clusters each reached through one head
entry and scored by a smaller projection."""
import collections

import ember
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ['AdaptiveLogSoftmaxWithLoss']

_ASMoutput = collections.namedtuple('_ASMoutput', ['output', 'loss'])


class AdaptiveLogSoftmaxWithLoss(Module):
    """forward(input (N, in_features), target (N,)) -> (output: each target's log-probability,
    loss: their negated mean); log_prob(input) gives all classes', predict(input) the likeliest."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4., head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0 or cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 or \
                len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError('cutoffs should be a sequence of unique, positive integers sorted in an increasing '
                             'order, where each value is between 1 and n_classes-1')
        self.in_features, self.n_classes, self.div_value, self.head_bias = in_features, n_classes, div_value, head_bias
        self.cutoffs = cutoffs + [n_classes]
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        factory = {'device': device, 'dtype': dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, size, bias=False, **factory)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for cluster in self.tail:
            for layer in cluster:
                layer.reset_parameters()

    def forward(self, input, target):
        if target.dim() == 1:
            if input.dim() != 2:
                raise RuntimeError('1D target tensor expects 2D input tensors, but found inputs with size',
                                   input.size())
            if input.size(0) != target.size(0):
                raise RuntimeError('Input and target should have the same size in the batch dimension.')
            unbatched = False
        elif target.dim() == 0:
            if input.dim() != 1:
                raise RuntimeError('0D target tensor expects 1D input tensors, but found inputs with size',
                                   input.size())
            input, target, unbatched = input.unsqueeze(0), target.unsqueeze(0), True
        else:
            raise RuntimeError('0D or 1D target tensor expected, multi-target not supported')
        n_classes = self.n_classes
        if target.numel() and (int(target.min()) < 0 or int(target.max()) >= n_classes):
            raise RuntimeError(f'Target values should be in [0, {n_classes - 1}], but values in range '
                               f'[{int(target.min())}, {int(target.max())}] were found. ')
        # the head entry each target is scored by: itself in the shortlist, else its cluster's
        cluster_of = ember.bucketize(target, ember.tensor(self.cutoffs[:-1]), right=True)  # 0: shortlist
        head_index = ember.where(cluster_of == 0, target, self.shortlist_size + cluster_of - 1)
        output = F.log_softmax(self.head(input), dim=1).gather(1, head_index.unsqueeze(1)).squeeze(1)
        for i in range(1, self.n_clusters + 1):
            rows = (cluster_of == i).nonzero().flatten()
            if rows.numel() == 0:
                continue
            local = target.index_select(0, rows) - self.cutoffs[i - 1]
            logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
            output = output.index_add(0, rows, logprob.gather(1, local.unsqueeze(1)).squeeze(1))
        loss = (-output).mean()
        return _ASMoutput(output.squeeze(0) if unbatched else output, loss)

    def _full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i, cluster in enumerate(self.tail):
            parts.append(F.log_softmax(cluster(input), dim=1) + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return ember.cat(parts, dim=1)

    def log_prob(self, input):
        """log-probabilities of every class: (N, n_classes), or (n_classes,) for a 1-d input."""
        if input.dim() == 1:
            return self.log_prob(input.unsqueeze(0)).squeeze(0)
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The likeliest class of each row: (N,), or a 0-d tensor for a 1-d input."""
        return self.log_prob(input).argmax(dim=-1)
