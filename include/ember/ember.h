/* Ember: tensors, ops and autograd in C. Include this one header. */
#ifndef EMBER_H
#define EMBER_H
#include "core.h"
#include "ops.h"
#include "reduce.h"
#include "linalg.h"
#include "index.h"
#include "sort.h"
#include "shape.h"
#include "random.h"
#include "conv.h"
#include "pool.h"
#include "norm.h"
#include "loss.h"
#include "rnn.h"
#include "attention.h"
#include "serialize.h"
#include "nn.h"
#include "optim.h"
#include "nnact.h"
#include "autograd.h"
#include "io.h"
#endif
