/* The DLPack exchange structs (https://dmlc.github.io/dlpack/latest/c_api.html,
 * v0.8 ABI), written from the spec: a producer hands a consumer a
 * DLManagedTensor in a PyCapsule named "dltensor"; the consumer renames the
 * capsule "used_dltensor" and calls `deleter` once it no longer needs the
 * memory. A capsule destroyed unconsumed calls the deleter itself. */
#ifndef EMP_DLPACK_H
#define EMP_DLPACK_H
#include <stdint.h>

typedef enum {
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3,
    kDLOpenCL = 4,
    kDLVulkan = 7,
    kDLMetal = 8,
    kDLVPI = 9,
    kDLROCM = 10,
    kDLROCMHost = 11,
    kDLExtDev = 12,
    kDLCUDAManaged = 13,
    kDLOneAPI = 14,
} DLDeviceType;

typedef struct {
    DLDeviceType device_type;
    int32_t device_id;
} DLDevice;

typedef enum {
    kDLInt = 0,
    kDLUInt = 1,
    kDLFloat = 2,
    kDLOpaqueHandle = 3,
    kDLBfloat = 4,
    kDLComplex = 5,
    kDLBool = 6,
} DLDataTypeCode;

typedef struct {
    uint8_t code;   /* DLDataTypeCode */
    uint8_t bits;
    uint16_t lanes; /* 1 for scalars */
} DLDataType;

typedef struct {
    void *data;           /* element 0 is at data + byte_offset */
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides;     /* in elements; NULL: compact row-major */
    uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;    /* the producer's */
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

#endif
