export { presentVolume } from '../../domain/volume-json';
export type { VolumeJson } from '../../domain/volume-json';
