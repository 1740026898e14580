package demo.cpu;

import demo.util.Harness;

/**
 * usage: SleepSpin MS. caller() calls sleepFor() (Thread.sleep MS: elapsed MS, on-CPU ~0)
 * and spinFor() (busy MS: elapsed and on-CPU MS).
 */
public final class SleepSpin {
    static long ms;

    static void sleepFor() throws InterruptedException {
        Thread.sleep(ms);
    }

    static void spinFor() {
        long end = System.nanoTime() + ms * 1_000_000L; while (System.nanoTime() < end) { }
    }

    static void caller() throws InterruptedException {
        sleepFor();
        spinFor();
    }

    public static void main(String[] args) throws Exception {
        ms = Long.parseLong(args[0]);
        Harness.awaitGo();
        caller();
        Harness.done("ok");
    }
}
