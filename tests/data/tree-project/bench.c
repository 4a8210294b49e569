/* Prints a rig-metric line, as a lookup microbenchmark in the style of the buffer-head lookup benchmark would. */
#include <stdio.h>
#include <time.h>

int main(void)
{
    struct timespec start, end;
    volatile unsigned long sum = 0;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (unsigned long i = 0; i < 1000000; ++i)
        sum += i;
    clock_gettime(CLOCK_MONOTONIC, &end);
    double ns = (end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec);
    printf("rig-metric loop_ns_per_op %.3f ns\n", ns / 1000000);
    return 0;
}
