/*
 * test_trace_rowheap.c - the max-heap of row numbers that the iteration
 * sweep (finish.c) and the MTIA filter (filter_mtia.c) share: random pushes
 * and pops against a plain array searched for its maximum.
 */
#include <stdlib.h>

#include "test.h"
#include "trace/rowheap.h"

TEST(trace_rowheap_random)
{
	enum { N = 4000 };
	uint32_t *heap = malloc(N * sizeof *heap), *ref = malloc(N * sizeof *ref);
	REQUIRE(heap && ref);
	size_t nh = 0, nr = 0;
	uint32_t seed = 12345, next = 0;
	for (int step = 0; step < 3 * N; step++) {
		seed = seed * 1103515245u + 12345u;
		bool push = nr == 0 || (nr < N && (seed >> 16) % 3 != 0);
		if (push) {
			/* unique rows, not in order: the sweeps push in ts order */
			uint32_t row = (next++ * 7919u) % 100003u;
			rowheap_push(heap, &nh, row);
			ref[nr++] = row;
		} else {
			size_t m = 0;
			for (size_t i = 1; i < nr; i++)
				if (ref[i] > ref[m])
					m = i;
			CHECK_INT(heap[0], ref[m]);
			ref[m] = ref[--nr];
			rowheap_pop(heap, &nh);
		}
		CHECK_INT(nh, nr);
		if (nh && nr) {
			uint32_t mx = ref[0];
			for (size_t i = 1; i < nr; i++)
				mx = ref[i] > mx ? ref[i] : mx;
			if (heap[0] != mx) {
				CHECK_INT(heap[0], mx);
				break;
			}
		}
	}
	while (nh) /* drains in descending order */ {
		uint32_t top = heap[0];
		rowheap_pop(heap, &nh);
		if (nh)
			CHECK(heap[0] < top);
	}
	free(heap);
	free(ref);
}
