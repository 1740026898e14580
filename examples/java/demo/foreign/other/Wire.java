package demo.foreign.other;

/**
 * Untraced code a traced method calls (with --package demo/foreign/traced): a wait off the CPU,
 * work on the CPU, and a call back into traced code.
 */
public final class Wire {
    private Wire() {
    }

    /** Waits ms milliseconds off the CPU, as a socket read waits for the server. */
    public static void await(long ms) throws InterruptedException {
        Thread.sleep(ms);
    }

    /** The same arithmetic as Loops in traced code: iters rounds, no calls. */
    public static long burn(long iters) {
        long x = 1;
        for (long i = 0; i < iters; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return x;
    }

    /** Calls back into traced code, as a JDK stream calls a driver's override. */
    public static long callback(Work work, long iters) {
        return work.run(iters);
    }

    /** Implemented in traced code. */
    public interface Work {
        long run(long iters);
    }
}
