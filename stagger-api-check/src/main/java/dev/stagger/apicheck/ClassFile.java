package dev.stagger.apicheck;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The parts of a compiled class that make up its public surface, read straight from the class file
 * (JVMS chapter 4) without loading the class: its access flags (the nested-class flags when it is
 * nested), names, supertypes, and its fields and methods with their generic signatures.
 *
 * <p>Not thread-safe to build; immutable once read.
 */
final class ClassFile {

    static final int PUBLIC = 0x0001;
    static final int PRIVATE = 0x0002;
    static final int PROTECTED = 0x0004;
    static final int STATIC = 0x0008;
    static final int FINAL = 0x0010;
    static final int BRIDGE = 0x0040;
    static final int VARARGS = 0x0080;
    static final int INTERFACE = 0x0200;
    static final int ABSTRACT = 0x0400;
    static final int SYNTHETIC = 0x1000;
    static final int ANNOTATION = 0x2000;
    static final int ENUM = 0x4000;
    static final int MODULE = 0x8000;

    /** A field or method: access flags, name, descriptor and generic signature (or null). */
    record Member(int access, String name, String descriptor, String signature, List<String> exceptions) {
        boolean isMethod() {
            return descriptor.startsWith("(");
        }
    }

    final String name;            // binary name with slashes: dev/stagger/Retry$Builder
    final int access;             // the nested-class flags for a nested class, else the class flags
    final boolean nested;
    final String outer;           // binary name of the declaring class, or null
    final boolean localOrAnonymous;
    final String superName;       // null for java/lang/Object and module-info
    final List<String> interfaces;
    final String signature;       // generic class signature, or null
    final List<Member> fields;
    final List<Member> methods;

    private ClassFile(String name, int access, boolean nested, String outer, boolean localOrAnonymous,
            String superName, List<String> interfaces, String signature, List<Member> fields, List<Member> methods) {
        this.name = name;
        this.access = access;
        this.nested = nested;
        this.outer = outer;
        this.localOrAnonymous = localOrAnonymous;
        this.superName = superName;
        this.interfaces = interfaces;
        this.signature = signature;
        this.fields = fields;
        this.methods = methods;
    }

    String packageName() {
        int slash = name.lastIndexOf('/');
        return slash < 0 ? "" : name.substring(0, slash).replace('/', '.');
    }

    String javaName() {
        return name.replace('/', '.').replace('$', '.');
    }

    static ClassFile read(byte[] bytes) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
        if (in.readInt() != 0xCAFEBABE) {
            throw new IOException("not a class file");
        }
        in.readUnsignedShort();
        in.readUnsignedShort();
        int count = in.readUnsignedShort();
        Object[] pool = new Object[count];
        int[] classIndex = new int[count];
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1 -> pool[i] = in.readUTF();
                case 3, 4 -> in.readInt();
                case 5, 6 -> {
                    in.readLong();
                    i++;
                }
                case 7 -> classIndex[i] = in.readUnsignedShort();
                case 8, 16, 19, 20 -> in.readUnsignedShort();
                case 9, 10, 11, 12, 17, 18 -> in.readInt();
                case 15 -> {
                    in.readUnsignedByte();
                    in.readUnsignedShort();
                }
                default -> throw new IOException("unknown constant pool tag " + tag);
            }
        }
        int access = in.readUnsignedShort();
        String name = className(pool, classIndex, in.readUnsignedShort());
        String superName = className(pool, classIndex, in.readUnsignedShort());
        int interfaceCount = in.readUnsignedShort();
        List<String> interfaces = new ArrayList<>();
        for (int i = 0; i < interfaceCount; i++) {
            interfaces.add(className(pool, classIndex, in.readUnsignedShort()));
        }
        List<Member> fields = members(in, pool, classIndex);
        List<Member> methods = members(in, pool, classIndex);
        Attributes found = attributes(in, pool, classIndex, name);
        boolean nested = found.innerClass != null;
        String outer = null;
        boolean local = false;
        if (nested) {
            access = found.innerClass[2];
            outer = found.innerClass[0] == 0 ? null : className(pool, classIndex, found.innerClass[0]);
            local = found.innerClass[0] == 0 || found.innerClass[1] == 0;
        }
        String signature = found.signature;
        return new ClassFile(name, access, nested, outer, local, superName, List.copyOf(interfaces), signature,
                List.copyOf(fields), List.copyOf(methods));
    }

    private static List<Member> members(DataInputStream in, Object[] pool, int[] classIndex) throws IOException {
        int count = in.readUnsignedShort();
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int access = in.readUnsignedShort();
            String name = (String) pool[in.readUnsignedShort()];
            String descriptor = (String) pool[in.readUnsignedShort()];
            Attributes found = attributes(in, pool, classIndex, null);
            members.add(new Member(access, name, descriptor, found.signature, List.copyOf(found.exceptions)));
        }
        return members;
    }

    /** The attributes the surface needs; the rest are skipped. */
    private static final class Attributes {
        String signature;
        final List<String> exceptions = new ArrayList<>();
        int[] innerClass; // this class's own InnerClasses entry: outer class index, inner name index, flags
    }

    private static Attributes attributes(DataInputStream in, Object[] pool, int[] classIndex, String self)
            throws IOException {
        Attributes found = new Attributes();
        int count = in.readUnsignedShort();
        for (int a = 0; a < count; a++) {
            String attribute = (String) pool[in.readUnsignedShort()];
            int length = in.readInt();
            switch (attribute) {
                case "Signature" -> found.signature = (String) pool[in.readUnsignedShort()];
                case "Exceptions" -> {
                    int n = in.readUnsignedShort();
                    for (int e = 0; e < n; e++) {
                        found.exceptions.add(className(pool, classIndex, in.readUnsignedShort()));
                    }
                }
                case "InnerClasses" -> {
                    int entries = in.readUnsignedShort();
                    for (int e = 0; e < entries; e++) {
                        String inner = className(pool, classIndex, in.readUnsignedShort());
                        int[] entry = {in.readUnsignedShort(), in.readUnsignedShort(), in.readUnsignedShort()};
                        if (inner.equals(self)) {
                            found.innerClass = entry;
                        }
                    }
                }
                default -> in.skipNBytes(length);
            }
        }
        return found;
    }

    private static String className(Object[] pool, int[] classIndex, int index) {
        return index == 0 ? null : (String) pool[classIndex[index]];
    }
}
