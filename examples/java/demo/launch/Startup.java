package demo.launch;

/**
 * Launch-mode workload: no stdin protocol, so it can run as `jmethodtime -- java ...`.
 * Args: CALLS [EXIT_CODE [SLEEP_MS]]. Calls step(int) CALLS times from main, each
 * step calls leaf() once; then sleeps SLEEP_MS (so a signal can reach it). With
 * EXIT_CODE 0 main returns (so its return probe fires); otherwise System.exit(EXIT_CODE).
 * The static initializer runs once, before main.
 */
public final class Startup {
    static final long BORN = System.nanoTime();
    static long sink;

    static int leaf(int i) {
        return i * 31 + 7;
    }

    static void step(int i) {
        sink += leaf(i);
    }

    public static void main(String[] args) throws Exception {
        int calls = Integer.parseInt(args[0]);
        int exitCode = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        long sleepMs = args.length > 2 ? Long.parseLong(args[2]) : 0;
        for (int i = 0; i < calls; i++)
            step(i);
        System.out.println("DONE calls=" + calls + " sink=" + sink);
        System.out.flush();
        if (sleepMs > 0)
            Thread.sleep(sleepMs);
        if (exitCode != 0)
            System.exit(exitCode);
    }
}
