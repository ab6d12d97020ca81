/* The baseline of bench/dist/run.py: MPI_Allreduce (in place, float32 SUM)
 * called from C, the best time of `reps` for each message size; rank 0 prints
 * "bytes microseconds" lines. Build: mpicc -O2 allreduce_mpi.c */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 1; i < argc; i++) {
        long bytes = atol(argv[i]), n = bytes / 4;
        int reps = bytes <= (1 << 20) ? 200 : 20;
        float *x = calloc((size_t)n, sizeof *x);
        double best = 1e30;
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Allreduce(MPI_IN_PLACE, x, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            double t = MPI_Wtime() - t0;
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (t < best)
                best = t;
        }
        if (rank == 0)
            printf("%ld %.3f\n", bytes, best * 1e6);
        free(x);
    }
    MPI_Finalize();
    return 0;
}
