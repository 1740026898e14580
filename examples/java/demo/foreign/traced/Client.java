package demo.foreign.traced;

import demo.foreign.other.Wire;

/**
 * With --package demo/foreign/traced, call() spends its exclusive time in three parts:
 * its own loop (ITERS rounds), untraced Wire.await (MS ms off the CPU) and untraced
 * Wire.burn (ITERS rounds on the CPU); the time of Loop.run, which untraced Wire.callback
 * calls back, is Loop.run's own. So call()'s foreign time is the wait and the burn, of which
 * only the burn is on a CPU; Loop.run has none; call() has exactly one traced event (Loop.run's
 * entry) inside its foreign time per call.
 */
public final class Client {
    private Client() {
    }

    public static long call(long ms, long iters) throws InterruptedException {
        Wire.await(ms);
        long x = Wire.burn(iters);
        x += Wire.callback(new Loop(), iters);
        for (long i = 0; i < iters; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return x;
    }

    /** Traced work behind an untraced interface: ITERS rounds, no calls. */
    public static final class Loop implements Wire.Work {
        @Override
        public long run(long iters) {
            long x = 1;
            for (long i = 0; i < iters; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            return x;
        }
    }
}
