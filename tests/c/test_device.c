/* The device struct (src/core/device.h): memory through the CPU and meta
 * devices, host reads (em_host_tensor), cross-device copies and errors. */
#include "test.h"
#include "../../src/core/device.h"

TEST(device_cpu_memory_functions)
{
    em_device cpu = EM_DEVICE_CPU;
    const em_device_impl *d = em_device_get(cpu);
    CHECK(d == &em_cpu_device && d->host_addressable && !strcmp(d->name, "cpu"));
    CHECK(d->stream_new == NULL && d->event_record == NULL); /* in-order device: no streams */
    void *a = NULL, *b = NULL;
    CHECK(d->alloc(cpu, 100, &a) == EM_OK && a && ((uintptr_t)a & 63) == 0);
    CHECK(d->alloc(cpu, 100, &b) == EM_OK && b);
    CHECK(d->memset(cpu, a, 7, 100) == EM_OK);
    CHECK(d->copy_device(cpu, b, a, 100) == EM_OK);
    unsigned char host[100];
    CHECK(d->copy_to_host(cpu, host, b, 100) == EM_OK);
    for (int i = 0; i < 100; i++) CHECK(host[i] == 7);
    host[5] = 9;
    CHECK(d->copy_from_host(cpu, a, host, 100) == EM_OK && ((unsigned char *)a)[5] == 9);
    CHECK(d->synchronize(cpu) == EM_OK);
    d->free(cpu, a, 100);
    d->free(cpu, b, 100);
}

TEST(device_meta_memory_functions)
{
    em_device meta = {EM_META, 0};
    const em_device_impl *d = em_device_get(meta);
    CHECK(d == &em_meta_device && !d->host_addressable && !strcmp(d->name, "meta"));
    void *p = (void *)1;
    CHECK(d->alloc(meta, 1 << 30, &p) == EM_OK && p == NULL); /* a size, no memory */
    CHECK(d->memset(meta, NULL, 0, 16) == EM_OK && d->copy_from_host(meta, NULL, "abc", 3) == EM_OK);
    char host[4];
    CHECK_ERR(d->copy_to_host(meta, host, NULL, 4), EM_ERR_NOT_IMPLEMENTED);
    CHECK(!strcmp(em_last_error(), "Cannot copy out of meta tensor; no data!"));
    d->free(meta, NULL, 1 << 30);
    CHECK(!strcmp(em_device_str(meta), "meta") && !strcmp(em_device_str(EM_DEVICE_CPU), "cpu"));
#ifndef EM_WITH_CUDA
    CHECK_ERR(em_device_get((em_device){EM_CUDA, 0}), EM_ERR_DEVICE);
#endif
}

TEST(device_meta_tensors_have_no_data)
{
    em_device prev = em_set_factory_device((em_device){EM_META, 0});
    em_tensor *m = em_empty(SHAPE(1000, 1000), EM_F32); /* 4 MB of nothing */
    em_tensor *z = em_zeros(SHAPE(2, 3), EM_F64);
    em_tensor *f = em_from_data((const float[]){1, 2}, SHAPE(2), EM_F32);
    em_set_factory_device(prev);
    CHECK(prev.type == EM_CPU && em_factory_device().type == EM_CPU);
    CHECK(m && z && f);
    CHECK(em_device_of(m).type == EM_META && em_data_ptr(m) == NULL && em_storage_nbytes(m) == 4000000);
    em_tensor *s = em_add(m, m, 1.0); /* metadata only */
    CHECK(s && em_device_of(s).type == EM_META && em_size(s, 1) == 1000);
    em_tensor *zt = em_transpose(z, 0, 1), *mm = zt ? em_matmul(z, zt) : NULL;
    CHECK(mm && em_device_of(mm).type == EM_META && em_size(mm, 0) == 2 && em_size(mm, 1) == 2);
    double v;
    CHECK_ERR(em_item(f, &v), EM_ERR_VALUE); /* 2 elements */
    CHECK_ERR(em_get(f, (const int64_t[]){0}, &v), EM_ERR_NOT_IMPLEMENTED);
    CHECK_ERR(em_host_tensor(f), EM_ERR_NOT_IMPLEMENTED);
    em_tensor *cpu = em_ones(SHAPE(2, 3), EM_F64);
    CHECK_ERR(em_add(z, cpu, 1.0), EM_ERR_DEVICE);
    CHECK(!strcmp(em_last_error(),
                  "Expected all tensors to be on the same device, but found at least two devices, meta and cpu!"));
    CHECK_ERR(em_to_device(z, EM_DEVICE_CPU), EM_ERR_NOT_IMPLEMENTED); /* copying out */
    em_tensor *back = em_to_device(cpu, (em_device){EM_META, 0});  /* copying in */
    CHECK(back && em_device_of(back).type == EM_META && em_numel(back) == 6);
    RELEASE(m, z, f, s, zt, mm, cpu, back);
}

TEST(device_host_reads_on_cpu_take_no_copy)
{
    em_tensor *t = em_from_data((const int64_t[]){4, 5, 6}, SHAPE(3), EM_I64);
    em_tensor *h = em_host_tensor(t);
    CHECK(h == t); /* the same tensor: no copy on the CPU */
    em_release(h);
    em_tensor *d = em_empty(SHAPE(3), EM_I64);
    CHECK(em_copy_(d, t) == EM_OK && em_equal(d, t));
    double v;
    CHECK(em_get(t, (const int64_t[]){2}, &v) == EM_OK && v == 6);
    CHECK(em_set(d, (const int64_t[]){1}, 9) == EM_OK && em_get(d, (const int64_t[]){1}, &v) == EM_OK && v == 9);
    RELEASE(t, d);
}
