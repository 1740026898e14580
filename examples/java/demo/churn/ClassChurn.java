package demo.churn;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;

/**
 * Class churn, as app servers, proxies and scripting engines make it: ROUNDS rounds, each of which
 * defines demo.churn.Churned in a fresh class loader with its method renamed m00000, m00001, ...,
 * calls loop() once (which calls the renamed method CALLS times), drops the loader and collects
 * garbage, so the class unloads and its symbols (the method's name) can be freed and their memory
 * reused for the next round's names.
 * Prints READY (after one warm-up round, when WAIT is given: then waits for a line on stdin) and,
 * at the end, DONE rounds=.. calls=.. unloaded=.. (classes the JVM unloaded, from its MXBean).
 * With BURST ("burst", which waits as WAIT does), it defines the ROUNDS classes first and keeps
 * them, then calls each one's loop() once in a row: ROUNDS methods seen for the first time within
 * milliseconds, as an app server's first request makes them.
 * usage: ClassChurn ROUNDS CALLS [WAIT|BURST]
 */
public final class ClassChurn {
    private ClassChurn() {}

    static final class OneShotLoader extends ClassLoader {
        OneShotLoader() {
            super(ClassChurn.class.getClassLoader());
        }

        Class<?> define(String name, byte[] bytes) {
            return defineClass(name, bytes, 0, bytes.length);
        }
    }

    static byte[] template() throws IOException {
        try (InputStream in = ClassChurn.class.getResourceAsStream("Churned.class")) {
            return in.readAllBytes();
        }
    }

    static int indexOf(byte[] hay, byte[] needle) {
        for (int i = 0; i + needle.length <= hay.length; i++) {
            int j = 0;
            while (j < needle.length && hay[i + j] == needle[j]) {
                j++;
            }
            if (j == needle.length) {
                return i;
            }
        }
        throw new IllegalStateException("m00000 not in the template");
    }

    // Churned with its method renamed m<r>, in a loader of its own: its loop().
    static Method defineRenamed(byte[] template, int at, int r) throws Exception {
        byte[] bytes = template.clone();
        byte[] name = String.format("m%05d", r).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(name, 0, bytes, at, name.length);
        Class<?> c = new OneShotLoader().define("demo.churn.Churned", bytes);
        return c.getMethod("loop", long.class, int.class);
    }

    static long round(byte[] template, int at, int r, int calls, long x) throws Exception {
        return (long) defineRenamed(template, at, r).invoke(null, x, calls);
    }

    static long burst(byte[] template, int at, int rounds, int calls, long x) throws Exception {
        Method[] loops = new Method[rounds];
        for (int r = 0; r < rounds; r++) {
            loops[r] = defineRenamed(template, at, r);
        }
        for (Method loop : loops) {
            x = (long) loop.invoke(null, x, calls);
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int calls = Integer.parseInt(args[1]);
        boolean wait = args.length > 2;
        boolean burst = wait && args[2].equals("burst");
        byte[] template = template();
        int at = indexOf(template, "m00000".getBytes(StandardCharsets.US_ASCII));
        long x = 1;
        if (wait) {
            // Warm up the reflection and class-definition paths with a name outside the traced range.
            x = round(template, at, 99999, calls, x);
            System.gc();
            System.out.println("READY");
            System.out.flush();
            System.in.read();
        }
        if (burst) {
            x = burst(template, at, rounds, calls, x);
        } else {
            for (int r = 0; r < rounds; r++) {
                x = round(template, at, r, calls, x);
                System.gc();
            }
        }
        long unloaded = java.lang.management.ManagementFactory.getClassLoadingMXBean().getUnloadedClassCount();
        StringBuilder done = new StringBuilder("DONE rounds=");
        done.append(rounds).append(" calls=").append(calls).append(" unloaded=").append(unloaded)
            .append(" x=").append(x);
        System.out.println(done);
    }
}
