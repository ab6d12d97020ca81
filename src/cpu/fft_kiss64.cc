/* The C face of kissfft<double> (src/cpu/fft_kiss64.h). Allocation failures
 * (std::bad_alloc) become NULL: no exception crosses into C. */
#include "fft_kiss64.h"

#include <kissfft/kissfft.hh>
#include <memory>
#include <new>
#include <vector>

typedef std::complex<double> cpx;

struct kiss64 {
    kissfft<double> fft;
};

/* kissfft computes its twiddles as exp(i k phi), phi = -+2 pi/n rounded,
 * which is off by up to about 2 pi eps at large k: relative errors of the
 * transforms 2-3x NumPy's. kiss64_make replaces them with the caller's
 * (exact at the quarter turns). The member is private; an explicit
 * instantiation may name it (C++17 [temp.explicit]/14), which hands us a
 * pointer to it through the friend below. */
static std::vector<cpx> kissfft<double>::*twiddles_member();
template <std::vector<cpx> kissfft<double>::*M> struct twiddles_access {
    friend std::vector<cpx> kissfft<double>::*twiddles_member() { return M; }
};
template struct twiddles_access<&kissfft<double>::_twiddles>;

kiss64 *kiss64_make(int64_t n, bool inverse, const double *twiddles)
{
    try {
        std::unique_ptr<kiss64> p(new kiss64{kissfft<double>((std::size_t)n, inverse)});
        std::vector<cpx> &tw = p->fft.*twiddles_member();
        const cpx *w = reinterpret_cast<const cpx *>(twiddles);
        tw.assign(w, w + n);
        /* kissfft's generic butterfly (prime factors above 5) sizes a scratch
         * buffer in the plan on first use: one run here, so that kiss64_run
         * never allocates (and copies inherit the buffer) */
        std::int64_t m = n;
        for (std::int64_t f : {2, 3, 5})
            while (m % f == 0) m /= f;
        if (m > 1) {
            std::vector<cpx> line((std::size_t)(2 * n));
            p->fft.transform(line.data(), line.data() + n);
        }
        return p.release();
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

kiss64 *kiss64_copy(const kiss64 *p)
{
    try {
        return new kiss64(*p);
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

/* std::complex<double> is laid out as double[2] (C++11 [complex.numbers]). */
void kiss64_run(kiss64 *p, double *out, const double *in)
{
    p->fft.transform(reinterpret_cast<const cpx *>(in), reinterpret_cast<cpx *>(out));
}

void kiss64_free(kiss64 *p)
{
    delete p;
}
