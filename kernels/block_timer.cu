// Blocking kernel for launch-lag-free CUDA-event timing (l2attr/measure/timer.py).
//
// One thread waits until the host sets word 0 of a host-mapped buffer (pinned memory the GPU reads
// over the bus). The host launches this kernel, then enqueues the start event, the kernel under
// test and the stop event, and only then sets the flag: however long the host took to enqueue,
// the stream cannot reach the start event before everything behind it is queued, so the event
// interval holds the timed kernel alone. A bounded wait (timeout_ns on the global timer) keeps a
// forgotten release from hanging the GPU; word 1 says whether it ran out. While waiting, the
// thread also counts SM cycles against global-timer nanoseconds (words 2 and 3): the SM clock
// right before the timed kernel, for the throttle check.
extern "C" __global__ void block_on_flag(volatile long long* words, long long timeout_ns) {
    unsigned long long t0, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    const long long c0 = clock64();
    now = t0;
    int timed_out = 0;
    while (words[0] == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if ((long long)(now - t0) > timeout_ns) { timed_out = 1; break; }
    }
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    const long long c1 = clock64();
    words[1] = timed_out;
    words[2] = c1 - c0;
    words[3] = (long long)(now - t0);
    __threadfence_system();
}
